"""One recall end to end on the embedded engine (``recall.core``): what a
hit shows of its turn, how the asking session's interactions come first,
and how memories are dated, grouped and validated."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessions_graph import MemoryValidationError, SessionsGraph
from sessions_graph.engines.base import action_key
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.recall.core import recall


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(engine=SQLiteEngine(tmp_path / "s.db"))
    try:
        yield g
    finally:
        g.close()


def said(graph: SessionsGraph, session_id: str, *turns: tuple[str, str], **start: Any) -> None:
    """Record alice's ``session_id`` with ``turns`` (action type, text), ids
    ``<session_id>-<n>``."""
    graph.record_session_start(session_id, user_id="alice", **start)
    graph.record_actions(
        session_id,
        [
            {"action_id": f"{session_id}-{n}", "action_type": kind, "text": text}
            for n, (kind, text) in enumerate(turns)
        ],
    )


def hits(graph: SessionsGraph, query: str, **options: Any) -> list[dict[str, Any]]:
    return recall(graph.engine, "alice", query, **options)["hits"]


def test_a_long_token_asked_for_is_shown_in_its_turns_snippet(graph: SessionsGraph) -> None:
    """A hash is searched cut into pieces; the snippet is centred on it as
    written, not on its pieces (which the text never holds with a space)."""
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    said(graph, "s-1", ("user_message", "p " * 1500 + f"the digest {digest} " + "q " * 1500))
    said(graph, "s-2", ("user_message", "的" * 1500 + "東京の会議" + "的" * 1500))
    [found] = hits(graph, digest)
    assert digest in found["text"]
    [found] = hits(graph, "東京")
    assert "東京の会議" in found["text"]


def test_a_compound_asked_for_closed_is_shown_where_its_turn_writes_it_open(
    graph: SessionsGraph,
) -> None:
    said(graph, "s-1", ("user_message", "p " * 1500 + "the smart watch sync " + "q " * 1500))
    [found] = hits(graph, "smartwatch")
    assert "smart watch sync" in found["text"]


def test_a_turn_outside_an_exchange_shows_the_turn_before_and_after_it(
    graph: SessionsGraph,
) -> None:
    notes = ["alpha note", "beta note", "gamma zeppelin", "delta note", "epsilon note"]
    said(graph, "s-1", *[("user_message", n) for n in notes])
    [found] = hits(graph, "zeppelin", limit=1)
    assert found["action_id"] == "s-1-2" and found["exchange"] == ["s-1-2"]
    assert found["action_type"] == "user_message"
    assert found["text"].splitlines() == [
        "   user: beta note",
        ">> user: gamma zeppelin",
        "   user: delta note",
    ]
    # The first turn of its session has none before it.
    [first] = hits(graph, "alpha", limit=1)
    assert first["text"].splitlines() == [">> user: alpha note", "   user: beta note"]


def test_a_request_and_the_replies_that_matched_are_one_hit(graph: SessionsGraph) -> None:
    said(
        graph,
        "s-1",
        ("user_message", "which queue carries the billing events?"),
        ("assistant_message", "The billing events go through RabbitMQ."),
        ("assistant_message", "Its billing queue is durable, for the events."),
    )
    [found] = hits(graph, "billing events queue")
    assert found["exchange"] == ["s-1-0", "s-1-1", "s-1-2"]
    assert [line[:2] for line in found["text"].splitlines()] == [">>", ">>", ">>"]
    kind = {"s-1-0": "user_message"}.get(found["action_id"], "assistant_message")
    assert found["action_type"] == kind


def test_the_same_exchange_in_other_sessions_is_named_not_shown(graph: SessionsGraph) -> None:
    for n, stamp in ((1, "2026-01-01T10:00:00Z"), (2, "2026-02-01T10:00:00Z")):
        graph.record_session_start(f"s-{n}", user_id="alice")
        graph.record_actions(
            f"s-{n}",
            [
                {
                    "action_id": f"s-{n}-0",
                    "action_type": "user_message",
                    "text": "Pin the grpcio wheel to 1.62.",
                    "timestamp": stamp,
                },
                {
                    "action_id": f"s-{n}-1",
                    "action_type": "assistant_message",
                    "text": "Pinned grpcio.",
                    "timestamp": stamp,
                },
            ],
        )
    [found] = hits(graph, "grpcio wheel")
    # The newest session's, naming the other; only its own turns shown.
    assert found["session_id"] == "s-2" and found["also_in"] == ["s-1"]
    assert found["exchange"] == ["s-2-0", "s-2-1"]
    assert len(found["text"].splitlines()) == 2


def test_identical_memories_are_one_hit_and_a_memory_is_dated_by_its_update(
    graph: SessionsGraph,
) -> None:
    said(graph, "s-1", ("user_message", "hello"))
    said(graph, "s-2", ("user_message", "hello"))
    graph.save_memory("alice", "Deploys go out on Tuesdays", session_id="s-1")
    graph.save_memory("alice", "deploys go out  on TUESDAYS", session_id="s-2")
    other = graph.save_memory("alice", "Deploys need a change ticket")
    found = hits(graph, "deploys", scope="memories")
    assert len(found) == 2
    same = next(h for h in found if h["memory_id"] != other.memory_id)
    assert len(same["also_in"]) == 1 and {same["session_id"], *same["also_in"]} == {"s-1", "s-2"}
    plain = next(h for h in found if h["memory_id"] == other.memory_id)
    assert "also_in" not in plain and plain["timestamp"] == other.created_at
    updated = graph.update_memory(other.memory_id, "Deploys need a change ticket, approved")
    assert updated is not None and updated.updated_at > other.created_at
    dated = {h["memory_id"]: h["timestamp"] for h in hits(graph, "deploys", scope="memories")}
    assert dated[other.memory_id] == updated.updated_at


@pytest.mark.parametrize("influence", [-0.01, 1.01, True, "0.5", None])
def test_a_feedback_influence_outside_0_to_1_is_refused(
    graph: SessionsGraph, influence: object
) -> None:
    with pytest.raises(MemoryValidationError, match="feedback_influence"):
        recall(graph.engine, "alice", "cache", feedback_influence=influence)  # type: ignore[arg-type]


@pytest.mark.parametrize("influence", [0, 0.0, 0.5, 1, 1.0])
def test_a_feedback_influence_from_0_to_1_is_taken(graph: SessionsGraph, influence: float) -> None:
    said(graph, "s-1", ("user_message", "the cache"))
    assert [h["action_id"] for h in hits(graph, "cache", feedback_influence=influence)] == ["s-1-0"]


def _asked(graph: SessionsGraph, *questions: str) -> None:
    """Interactions of alice's session ``app-1``, oldest first."""
    for question in questions:
        graph.record_interaction("alice", "app-1", question, [], source="recall")


def _history(graph: SessionsGraph, sessions: int = 6) -> None:
    for n in range(sessions):
        said(graph, f"s-{n}", ("user_message", f"the orion cache backend, note {n}"))


def _interactions(found: list[dict[str, Any]]) -> list[str]:
    return [h["text"].splitlines()[0] for h in found if h["kind"] == "interaction"]


def test_at_most_three_interactions_come_first_and_never_over_half_the_places(
    graph: SessionsGraph,
) -> None:
    _history(graph, 10)
    _asked(graph, *(f"orion cache question {n}" for n in range(5)))

    def first(limit: int) -> tuple[int, int]:
        found = hits(graph, "orion cache", session_id="app-1", scope="auto", limit=limit)
        kinds = [h["kind"] for h in found]
        assert kinds == sorted(kinds, key=lambda k: k != "interaction")  # interactions first
        return kinds.count("interaction"), len(found)

    assert first(10) == (3, 10)
    assert first(4) == (2, 4)
    assert first(3) == (1, 3)
    assert first(2) == (1, 2)
    assert first(1) == (1, 1)


def test_an_interaction_matches_by_two_of_the_questions_content_words(
    graph: SessionsGraph,
) -> None:
    _history(graph, 1)
    _asked(
        graph,
        "orion cache settings",  # two of the three words
        "orion lunch",  # one
        "db for orion",
        "which backend is it",
        "orion cache backend again",  # all three, and the newest
    )

    def matched(question: str) -> list[str]:
        return _interactions(hits(graph, question, session_id="app-1", scope="interactions"))

    # Most words first, then the newest.
    assert matched("orion cache backend") == [
        "Q: orion cache backend again",
        "Q: orion cache settings",
    ]
    # A question of fewer content words needs all of them; one letter is no
    # word and stop words are none, two letters are one.
    assert matched("the orion x") == [
        "Q: orion cache backend again",
        "Q: db for orion",
        "Q: orion lunch",
    ]
    assert matched("db orion") == ["Q: db for orion"]
    # No content word at all: no interaction is said to match.
    assert matched("what is it") == []


def test_only_the_newest_200_interactions_of_the_session_are_read(graph: SessionsGraph) -> None:
    _asked(graph, "zircon quartz first")  # the oldest, the only match
    _asked(graph, *(f"unrelated question {n}" for n in range(199)))
    question = "zircon quartz"
    found = hits(graph, question, session_id="app-1", scope="interactions")
    assert _interactions(found) == ["Q: zircon quartz first"]
    _asked(graph, "one more unrelated")
    assert hits(graph, question, session_id="app-1", scope="interactions") == []


def test_the_turns_a_recall_shows_are_read_in_few_batches_best_first(
    graph: SessionsGraph,
) -> None:
    """Each read of turn windows is a query: the candidates' windows are read
    two per place asked for at once, the best first. Three places, eight
    sessions saying the same (one hit) then others: one read for the first
    six candidates, one more when the same text has used them up."""
    for n in range(20):
        text = "the zeppelin lands at noon" if n < 8 else f"a zeppelin {n} flies over the hangar"
        graph.record_session_start(f"s-{n:02d}", user_id="alice")
        graph.record_actions(
            f"s-{n:02d}",
            [
                {
                    "action_id": f"s-{n:02d}-0",
                    "action_type": "user_message",
                    "text": text,
                    "timestamp": f"2026-01-01T10:{59 - n:02d}:00Z",  # ranked as numbered
                }
            ],
        )
    reads: list[list[str]] = []
    turn_windows = graph.engine.turn_windows

    def counted(user_id: str, action_ids: list[str], radius: int) -> list[dict[str, Any]]:
        reads.append(list(action_ids))
        return turn_windows(user_id, action_ids, radius)

    graph.engine.turn_windows = counted  # type: ignore[method-assign]
    found = hits(graph, "zeppelin", limit=3)
    assert found[0]["action_id"] == "s-00-0" and len(found[0]["also_in"]) == 7
    assert len(found) == 3 and len(reads) == 2
    assert reads[0] == [f"s-{n:02d}-0" for n in range(6)]


def test_a_reply_two_actions_after_its_request_is_its_exchange_three_is_not(
    graph: SessionsGraph,
) -> None:
    """docs/recall.md: a request and the first reply to it, within two actions
    of each other; a reply after more tool calls stays a turn of its own."""
    said(
        graph,
        "s-near",
        ("user_message", "which broker carries the kestrel events?"),
        ("tool_call", "grep broker config"),
        ("assistant_message", "The kestrel events go through the broker NATS."),
    )
    said(
        graph,
        "s-far",
        ("user_message", "which broker carries the osprey events?"),
        ("tool_call", "grep broker config"),
        ("tool_result", "broker: nats"),
        ("assistant_message", "The osprey events go through the broker NATS."),
    )

    def exchange(question: str, action_id: str) -> list[str]:
        return next(h["exchange"] for h in hits(graph, question) if action_id in h["exchange"])

    assert exchange("kestrel events", "s-near-0") == ["s-near-0", "s-near-2"]
    assert exchange("osprey events", "s-far-0") == ["s-far-0"]
    assert exchange("osprey events", "s-far-3") == ["s-far-3"]


def test_tool_actions_without_a_tool_use_id_are_not_paired(graph: SessionsGraph) -> None:
    said(
        graph,
        "s-1",
        ("tool_call", "pg_dump --schema-only inventory"),
        ("tool_result", "CREATE TABLE inventory (sku text)"),
    )
    found = hits(graph, "inventory")
    assert sorted(h["exchange"] for h in found) == [["s-1-0"], ["s-1-1"]]


def test_a_memory_shows_900_characters_and_an_entitys_description_600(
    graph: SessionsGraph,
) -> None:
    graph.save_memory("alice", "zircon " + "m" * 2000)
    said(graph, "s-1", ("user_message", "zircon notes"))
    key = action_key("alice", "s-1-0")
    graph.engine.set_unit_chunks("action", key, "c1", [{"hash": "h1", "text": "c"}])
    graph.engine.save_extraction("h1", "base", [{"name": "Zircon", "description": "d" * 2000}], [])
    found = {h["kind"]: h for h in hits(graph, "zircon", scope="all")}
    assert found["memory"]["text"] == "zircon " + "m" * 893 + "…"
    assert found["entity"]["text"] == "d" * 600 + "…"
