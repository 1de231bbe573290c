"""The relevance floor of UserPromptSubmit injection, as a pure function."""

from __future__ import annotations

import pytest

from sessions_graph.hooks.inject import above_floor, topic_words

PAST = (
    "user: Which database should the orion cache use? assistant: Decision: the orion"
    " cache uses SQLite in WAL mode, not Redis."
)


@pytest.mark.parametrize(
    "prompt",
    ["thanks", "go on", "ok, continue please", "yes do it", "Thanks! Looks good.", "?", "  "],
)
def test_replies_to_the_agent_have_no_topic(prompt: str) -> None:
    assert topic_words(prompt) == []
    assert not above_floor(topic_words(prompt), PAST)


def test_topic_words_drop_function_words_only() -> None:
    assert topic_words("What did we pick for the orion cache database? The cache!") == [
        "pick",
        "orion",
        "cache",
        "database",
    ]


@pytest.mark.parametrize(
    ("prompt", "shown"),
    [
        ("what database did we pick for the orion cache?", True),  # 3 of 4
        ("is the cache on redis", True),  # 2 of 2
        ("redis", True),  # a one-word topic, present
        ("orion caches", True),  # a shared stem counts
        ("add a changelog entry for the release", False),  # 0 of 4
        ("the orion release notes and changelog", False),  # 1 of 4
        ("kubernetes", False),  # a one-word topic, absent
        ("tune postgres vacuum for the orion reporting jobs nightly", False),  # 1 of 6
    ],
)
def test_a_hit_must_cover_the_prompts_topic(prompt: str, shown: bool) -> None:
    assert above_floor(topic_words(prompt), PAST) is shown
