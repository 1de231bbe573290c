"""Interactions through real hook processes: a prompt the hook injects
context for is recorded with what was injected, the turn's reply answers it
at Stop (with ``used`` marks), and a compacted session gets its own story
back at SessionStart."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hooks_helpers import ClaudeTranscript
from test_hooks_inject import hook, injected, past_session, payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.actions import make_action
from sessions_graph.hooks.block import FIRST_BLOCK, NOTICE
from sessions_graph.hooks.interactions import (
    record_prompt_interaction,
    record_turn_answer,
    resumed_context,
)
from sessions_graph.settings import Settings, load_settings


def _graph() -> SessionsGraph:
    return SessionsGraph(settings=load_settings())


def test_prompt_injection_is_an_interaction_the_reply_answers(tmp_path: Path, db: Path) -> None:
    project = tmp_path / "orion"
    (project / ".git").mkdir(parents=True)
    past_session(
        tmp_path,
        project,
        "s-cache",
        [
            ("Which database should the orion cache use?", "SQLite in WAL mode, file cache_v2.db."),
            ("Add a changelog entry", "Added."),
        ],
    )
    transcript = ClaudeTranscript(tmp_path / "s-now.jsonl", "s-now", str(project))
    start = payload("SessionStart", "s-now", project, transcript.path, source="startup")
    assert hook(start).returncode == 0
    prompt = "Remind me, what database did we pick for the orion cache?"
    context = injected(
        hook(payload("UserPromptSubmit", "s-now", project, transcript.path, prompt=prompt)),
        "UserPromptSubmit",
    )
    assert "cache_v2.db" in context
    with _graph() as graph:
        [asked] = graph.interactions("alice", "s-now")
    assert (asked.question, asked.source, asked.answer) == (prompt, "prompt", None)
    assert len(asked.context) == 1  # one item injected
    assert "cache_v2.db" in asked.context[0].text

    transcript.user(prompt)
    transcript.assistant("We picked SQLite in WAL mode; the file is cache_v2.db.")
    assert hook(payload("Stop", "s-now", project, transcript.path)).returncode == 0
    with _graph() as graph:
        [answered] = graph.interactions("alice", "s-now")
        usage = graph.status("alice")["interactions"]
    assert answered.answer == "We picked SQLite in WAL mode; the file is cache_v2.db."
    assert [item.used for item in answered.context] == [True]
    assert usage[0]["session_id"] == "s-now" and usage[0]["used_share"] == 1.0

    # After a compaction the session's own exchange comes back, not other sessions.
    compact = payload("SessionStart", "s-now", project, transcript.path, source="compact")
    story = injected(hook(compact), "SessionStart")
    assert 'kind="this-session-so-far"' in story
    assert "what database did we pick" in story and "cache_v2.db" in story
    startup = payload("SessionStart", "s-later", project, source="startup")
    assert 'kind="where-you-left-off"' in injected(hook(startup), "SessionStart")


# -- in-process: the same functions, without the hook process ----------------------


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SessionsGraph]:
    settings = Settings(db=str(tmp_path / "x.db"), state_dir=str(tmp_path / "state"))
    g = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    g.record_session_start("s", user_id="alice")
    yield g
    g.close()


def _turns(graph: SessionsGraph, *actions: tuple[str, str]) -> None:
    """Append actions (type, text) to session "s", each of the origin its
    text tells (``provenance``)."""
    start = graph.engine.get_session("s")["action_count"]
    graph.record_actions_report(
        "s",
        [make_action(f"x{start + n}", kind, text, None) for n, (kind, text) in enumerate(actions)],
        user_id="alice",
    )


def _hit(action_id: str, text: str) -> dict[str, Any]:
    return {"kind": "turn", "action_id": action_id, "session_id": "old", "text": f">> {text}"}


def _asked(graph: SessionsGraph, prompt: str = "which cache?", hits: list | None = None) -> str:
    hits = hits if hits is not None else [_hit("h1", "the cache is redis_v7")]
    context = "\n".join(f"- (undated, turn) {h['text']!r}" for h in hits)
    payload = {"session_id": "s", "prompt": prompt}
    found = record_prompt_interaction(graph, payload, "alice", hits, context)
    assert found is not None
    return found


def _rows(graph: SessionsGraph, session_id: str = "s") -> list[dict[str, Any]]:
    """The session's live interactions as stored, newest first."""
    from sessions_graph.clock import utcnow

    return graph.engine.list_interactions("alice", session_id, utcnow(), 50)


def test_a_prompt_interaction_holds_the_hits_the_context_shows_and_where_it_was_asked(
    graph: SessionsGraph,
) -> None:
    _turns(graph, ("user_message", "hello"), ("assistant_message", "Hi."))
    hits = [_hit("h1", "redis_v7 one"), _hit("h2", "memcached_v2 two"), _hit("h3", "x_v3 three")]
    context = "header\n- (undated, turn) one\n- (undated, turn) two\nfooter"
    payload = {"session_id": "s", "prompt": "which cache?"}
    record_prompt_interaction(graph, payload, "alice", hits, context)
    (row,) = _rows(graph)
    assert [c["id"] for c in row["context"]] == ["h1", "h2"]  # the budget kept two
    assert (row["question"], row["source"], row["seq_from"]) == ("which cache?", "prompt", 2)


@pytest.mark.parametrize(
    "payload", [{"session_id": "s"}, {"prompt": "which cache?"}, {"session_id": 5, "prompt": "x"}]
)
def test_a_prompt_interaction_needs_a_session_and_a_prompt(
    graph: SessionsGraph, payload: dict[str, Any]
) -> None:
    assert record_prompt_interaction(graph, payload, "alice", [_hit("h1", "t")], "- (x") is None
    assert _rows(graph) == []


def test_a_prompt_in_a_session_the_store_does_not_know_yet_is_asked_at_its_start(
    graph: SessionsGraph,
) -> None:
    payload = {"session_id": "new", "prompt": "which cache?"}
    record_prompt_interaction(graph, payload, "alice", [_hit("h1", "t")], "- (x")
    (row,) = _rows(graph, "new")
    assert row["seq_from"] == 0


def test_the_turns_reply_answers_the_prompt_with_what_the_agent_said(
    graph: SessionsGraph,
) -> None:
    _turns(graph, ("user_message", "earlier"), ("assistant_message", "an earlier answer"))
    _asked(graph)
    _turns(
        graph,
        ("user_message", "which cache?"),
        ("tool_call", '{"command": "grep redis_v7 config"}'),
        ("tool_result", "2 matches"),
        ("assistant_message", "It is redis."),
        ("assistant_message", "Version 7."),
    )
    # Our own block, echoed back by the client: derived, so no answer.
    _turns(
        graph,
        (
            "assistant_message",
            '<sessions-graph-memory kind="prompt">the cache is redis_v7</sessions-graph-memory>',
        ),
    )
    assert record_turn_answer(graph, "s", "alice") == 1
    (row,) = _rows(graph)
    assert row["answer"] == "It is redis.\nVersion 7."
    # The tool's input carried the item's token: it was used.
    assert [c["used"] for c in row["context"]] == [True]
    # Answered once: a later turn does not answer it again.
    _turns(graph, ("assistant_message", "Something else."))
    assert record_turn_answer(graph, "s", "alice") == 0
    assert _rows(graph)[0]["answer"] == "It is redis.\nVersion 7."


def test_an_interaction_still_waiting_for_a_reply_stays_unanswered(graph: SessionsGraph) -> None:
    _asked(graph)
    _turns(graph, ("user_message", "which cache?"), ("tool_call", '{"command": "ls"}'))
    assert record_turn_answer(graph, "s", "alice") == 0
    assert _rows(graph)[0]["answer"] is None
    # One recorded without where it was asked (a recall's) is not the turn's to answer.
    graph.record_interaction("alice", "s", "a recall", [], source="recall")
    _turns(graph, ("assistant_message", "Done."))
    assert record_turn_answer(graph, "s", "alice") == 1
    assert [r["answer"] for r in _rows(graph)] == [None, "Done."]


def test_a_stop_answers_five_interactions_at_most(graph: SessionsGraph) -> None:
    for n in range(6):
        _asked(graph, f"question {n}")
    _turns(graph, ("assistant_message", "One reply."))
    assert record_turn_answer(graph, "s", "alice") == 5
    assert sum(r["answer"] is None for r in _rows(graph)) == 1


def test_the_reply_is_read_from_400_actions_and_8000_characters(graph: SessionsGraph) -> None:
    _asked(graph, hits=[_hit("h1", "the cache is qzv7")])
    _turns(graph, *[("assistant_message", f"m{n}") for n in range(401)])
    record_turn_answer(graph, "s", "alice")
    answer = _rows(graph)[0]["answer"]
    assert answer.endswith("\nm399")
    # The 8,001st character is not read: a token it would complete is not there.
    graph.record_session_start("t", user_id="alice")
    payload = {"session_id": "t", "prompt": "which cache?"}
    record_prompt_interaction(graph, payload, "alice", [_hit("h1", "the cache is qzv7")], "- (x")
    graph.record_actions_report(
        "t", [make_action("t1", "assistant_message", "y" * 7996 + " qzv7", None)]
    )
    record_turn_answer(graph, "t", "alice")
    (row,) = graph.interactions("alice", "t", plain=True)
    assert len(row["answer"]) == 8000 and [c["used"] for c in row["context"]] == [False]


# -- a resumed session's own story --------------------------------------------------


def _resumed(graph: SessionsGraph, session_id: str = "s", **extra: Any) -> Any:
    payload = {"session_id": session_id, "source": "compact", **extra}
    return resumed_context(graph, payload, "alice", 500, FIRST_BLOCK)


def test_a_compacted_session_gets_its_digest_and_questions_back(graph: SessionsGraph) -> None:
    _turns(graph, ("user_message", "Move the upload cache to redis"), ("assistant_message", "Ok."))
    graph.build_digest("s")
    digest = graph.session_digest("s")["text"]
    _asked(graph, "which cache do we use?")
    _turns(graph, ("assistant_message", "Redis."))
    record_turn_answer(graph, "s", "alice")
    _asked(graph, "and the eviction policy?")
    for source in ("compact", "resume"):
        context, items = _resumed(graph, source=source)
        lines = context.splitlines()
        assert lines[0] == f'<sessions-graph-memory kind="this-session-so-far"> {NOTICE}'
        assert lines[1:3] == ["This session so far (its digest):", f"- {json.dumps(digest)}"]
        assert lines[3] == "This session's recent questions and answers (newest first):"
        stamp = r"- \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\) asked "
        assert re.fullmatch(stamp + r'"and the eviction policy\?"', lines[4])
        assert re.fullmatch(stamp + r'"which cache do we use\?"; answered "Redis\."', lines[5])
        assert items[0] == "digest:s" and len(items) == 3
    for other in ({"source": "startup"}, {"source": None}, {"session_id": 7}):
        assert _resumed(graph, **other) is None


def test_a_resumed_session_with_a_digest_or_questions_only_gets_that(
    graph: SessionsGraph,
) -> None:
    graph.record_session_start("q", user_id="alice")
    assert _resumed(graph, "q") is None  # neither: the usual context instead
    graph.record_interaction("alice", "q", "which cache?", [], source="prompt", seq_from=0)
    context, _ = _resumed(graph, "q")
    assert "its digest" not in context and 'asked "which cache?"' in context
    _turns(graph, ("user_message", "Move the upload cache to redis"))
    graph.build_digest("s")
    context, items = _resumed(graph, "s")
    assert "This session so far (its digest):" in context and items == ["digest:s"]
    assert "questions and answers" not in context


def test_the_eight_newest_questions_come_back(graph: SessionsGraph) -> None:
    for n in range(9):
        _asked(graph, f"question {n}")
    context, items = _resumed(graph)
    assert len(items) == 8 and "question 0" not in context and "question 8" in context


def test_another_users_digest_is_not_shown(graph: SessionsGraph) -> None:
    graph.record_session_start("b", user_id="bob")
    graph.record_actions_report(
        "b", [make_action("b1", "user_message", "Rotate bob's deploy keys", None)], user_id="bob"
    )
    graph.build_digest("b")
    assert graph.session_digest("b") is not None
    assert _resumed(graph, "b") is None
