"""Action ids are each user's own (``engines.base.action_key``).

Runtime ids can be computed (Codex: a hash of the session id and a byte
offset), so a user who records another's ids first must not take them: the
other's session is captured whole, and everything keyed by an action (the
turn index, recall, chunks, entities, forgetting) stays per user."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessions_graph import SessionsGraph
from sessions_graph.hooks.transcript import import_actions

ROLLOUT = Path(__file__).parent / "fixtures" / "context" / "codex" / "relevant-past.jsonl"
IDS = ("t-0", "t-1", "t-2")


def session(graph: SessionsGraph, session_id: str, user_id: str, *texts: str) -> None:
    """A session of alternating user / assistant turns with the ids ``IDS``:
    the same ids for every user."""
    graph.record_session_start(session_id, user_id=user_id)
    graph.record_actions(
        session_id,
        [
            {
                "action_id": IDS[i],
                "action_type": "user_message" if i % 2 == 0 else "assistant_message",
                "text": text,
            }
            for i, text in enumerate(texts)
        ],
        user_id=user_id,
    )


def alice_and_bob(graph: SessionsGraph) -> None:
    session(graph, "s-alice", "alice", "Which queue for orders?", "RabbitMQ, with durable queues.")
    session(graph, "s-bob", "bob", "Which broker for invoices?", "Kafka, with compacted topics.")


def texts(graph: SessionsGraph, session_id: str) -> list[tuple[str, str]]:
    return [(a.action_id, a.text) for a in graph.get_actions(session_id)]


def test_ids_taken_first_by_another_user_do_not_stop_a_capture(graph: SessionsGraph) -> None:
    """alice records the ids bob's Codex rollout will have, in her own
    session, before bob's hook does: bob's session is still captured whole."""
    bobs = [dict(a) for a in import_actions(ROLLOUT, 0, "rollout-bob").actions]
    assert len(bobs) > 5
    graph.record_session_start("s-alice", user_id="alice")
    squatted = [
        {"action_id": a["action_id"], "action_type": "user_message", "text": "alice was here"}
        for a in bobs
    ]
    assert graph.record_actions("s-alice", squatted, user_id="alice") == len(bobs)

    graph.record_session_start("rollout-bob", user_id="bob")
    report = graph.record_actions_report("rollout-bob", bobs, user_id="bob")
    assert (report.added, report.foreign) == (len(bobs), 0)
    stored = graph.get_actions("rollout-bob")
    assert [a.action_id for a in stored] == [a["action_id"] for a in bobs]
    assert "alice was here" not in {a.text for a in stored}
    assert {a.text for a in graph.get_actions("s-alice")} == {"alice was here"}
    # Redelivered, bob's actions are still stored once.
    assert graph.record_actions("rollout-bob", bobs, user_id="bob") == 0
    assert graph.get_session("rollout-bob").action_count == len(bobs)  # type: ignore[union-attr]


def test_recall_finds_each_users_own_turn_behind_a_shared_id(graph: SessionsGraph) -> None:
    alice_and_bob(graph)
    for user, own, other in (("alice", "RabbitMQ", "Kafka"), ("bob", "Kafka", "RabbitMQ")):
        hits = graph.recall(user, f"{own} {other}", scope="turns").hits
        assert hits, user
        assert all(h.session_id == f"s-{user}" for h in hits)
        shown = " ".join(h.text for h in hits)
        assert own in shown and other not in shown
    # The turns around a hit are read per user too.
    windows = graph.engine.turn_windows("bob", ["t-1"], 1)
    assert {(w["session_id"], w["text"]) for w in windows} == {
        ("s-bob", "Which broker for invoices?"),
        ("s-bob", "Kafka, with compacted topics."),
    }
    assert graph.engine.turn_windows("carol", ["t-1"], 1) == []


def chunk_and_mention(graph: SessionsGraph, session_id: str, entity: str) -> None:
    """Reconciliation's result, written directly: each unit of the session
    chunked to its own chunk, and the last one naming ``entity``."""
    units: list[dict[str, Any]] = graph.engine.reconcilable_units(session_id)
    for unit in units:
        chunk = f"{session_id}:{unit['unit_id']}"
        graph.engine.set_unit_chunks(
            unit["unit_kind"], unit["unit_id"], chunk, [{"hash": chunk, "text": chunk}]
        )
    last = f"{session_id}:{units[-1]['unit_id']}"
    graph.engine.save_extraction(last, "base", [{"name": entity, "description": entity}], [])


def test_chunks_and_entities_of_a_shared_id_stay_each_users(graph: SessionsGraph) -> None:
    alice_and_bob(graph)
    alices = {u["unit_id"] for u in graph.engine.reconcilable_units("s-alice")}
    bobs = {u["unit_id"] for u in graph.engine.reconcilable_units("s-bob")}
    assert len(alices) == len(bobs) == 2 and not alices & bobs
    chunk_and_mention(graph, "s-alice", "Rabbit")
    assert [u["content_hash"] for u in graph.engine.reconcilable_units("s-bob")] == [None, None]
    assert graph.engine.unextracted_chunks("s-bob", "base") == []
    chunk_and_mention(graph, "s-bob", "Kafka")

    assert graph.engine.recall_entities("bob", ["rabbit"], 10) == []
    [kafka] = graph.engine.recall_entities("bob", ["kafka"], 10)
    assert [(u["unit_id"], u["session_id"]) for u in kafka["units"]] == [("t-1", "s-bob")]
    assert [s.session_id for s in graph.entity_sessions("Kafka", user_id="bob")] == ["s-bob"]
    assert graph.entity_sessions("Kafka", user_id="alice") == []
    assert [m.name for m in graph.session_entities("s-alice")] == ["Rabbit"]
    hits = graph.recall("bob", "kafka", scope="turns").hits
    assert {h.action_id for h in hits} == {"t-1"} and all(h.session_id == "s-bob" for h in hits)


def test_forgetting_one_users_session_leaves_the_other_users_same_ids(
    graph: SessionsGraph,
) -> None:
    alice_and_bob(graph)
    chunk_and_mention(graph, "s-alice", "Rabbit")
    chunk_and_mention(graph, "s-bob", "Kafka")
    graph.forget_session("s-alice")

    assert graph.get_actions("s-alice") == []
    assert texts(graph, "s-bob") == [
        ("t-0", "Which broker for invoices?"),
        ("t-1", "Kafka, with compacted topics."),
    ]
    assert {h.session_id for h in graph.recall("bob", "kafka invoices", scope="turns").hits} == {
        "s-bob"
    }
    assert [m.name for m in graph.session_entities("s-bob")] == ["Kafka"]
    assert [u["content_hash"] for u in graph.engine.reconcilable_units("s-bob")] == [
        "s-bob:" + u["unit_id"] for u in graph.engine.reconcilable_units("s-bob")
    ]
    # alice records the same ids again: new actions of hers, bob's untouched.
    session(graph, "s-alice-2", "alice", "Back to queues.")
    assert texts(graph, "s-alice-2") == [("t-0", "Back to queues.")]
    assert texts(graph, "s-bob")[0] == ("t-0", "Which broker for invoices?")
