"""Engine behaviour that is easy to let drift between SQLite and Memgraph.

Each test pins one observable detail of the ``Engine`` contract exactly as
the embedded engine (the reference) behaves, so that the first run against a
Memgraph server (MEMGRAPH_URL / MEMGRAPH_HOST) shows any difference. Most
tests call the engine directly, with fixed timestamps and ids, because the
façade stamps the current time and random ids.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sessions_graph import MemoryValidationError, SessionsGraph
from sessions_graph.engines.base import Engine, action_key
from sessions_graph.settings import Settings

T0 = "2026-11-29T10:00:00.000000+00:00"
T1 = "2026-11-29T11:00:00.000000+00:00"
T2 = "2026-11-29T12:00:00.000000+00:00"
T3 = "2026-11-29T13:00:00.000000+00:00"

SESSION_KEYS = {
    "session_id",
    "user_id",
    "started_at",
    "ended_at",
    "cwd",
    "project_key",
    "reconciliation_status",
    "reconciled_at",
    "reconciliation_error",
    "last_summary",
    "content_version",
    "action_count",
}


@pytest.fixture
def engine(graph: SessionsGraph) -> Engine:
    return graph.engine


#: The key of alice's action a-1, which ``set_unit_chunks`` takes.
A1 = action_key("alice", "a-1")


def memory(
    memory_id: str,
    user_id: str = "alice",
    session_id: str | None = None,
    at: str = T0,
    content: str | None = None,
) -> dict[str, Any]:
    return {
        "memory_id": memory_id,
        "user_id": user_id,
        "content": content or f"note {memory_id}",
        "session_id": session_id,
        "created_at": at,
        "updated_at": at,
    }


def action(action_id: str, timestamp: str | None = None, text: str | None = None) -> dict[str, Any]:
    return {
        "action_id": action_id,
        "action_type": "user_message",
        "text": text or f"said {action_id}",
        "timestamp": timestamp,
        "tool_name": None,
        "tool_use_id": None,
        "is_error": False,
    }


def entities(engine: Engine, session_id: str) -> list[dict[str, Any]]:
    """The façade's view of a session's entities (it groups the engine's mentions)."""
    graph = SessionsGraph(engine=engine, settings=Settings())
    return [e.model_dump() for e in graph.session_entities(session_id)]


def version(engine: Engine, session_id: str) -> int:
    session = engine.get_session(session_id)
    assert session is not None
    return session["content_version"]


def chunked_session(
    engine: Engine, session_id: str, user_id: str, *hashes: str, at: str = T0
) -> None:
    """A session with one action per chunk hash, each action chunked to it."""
    engine.start_session(session_id, user_id, at, None, None)
    engine.add_actions(session_id, user_id, [action(f"{session_id}-{h}") for h in hashes])
    for h in hashes:
        engine.set_unit_chunks(
            "action", action_key(user_id, f"{session_id}-{h}"), f"c-{h}", [{"hash": h, "text": h}]
        )


# -- memories -------------------------------------------------------------------------
def test_created_at_ties_break_by_memory_id_descending(engine: Engine) -> None:
    for memory_id in ("m-b", "m-c", "m-a"):
        engine.save_memory(memory(memory_id, session_id="s-1"))
    assert [m["memory_id"] for m in engine.list_memories("alice", 10)] == ["m-c", "m-b", "m-a"]
    assert [m["memory_id"] for m in engine.list_session_memories("s-1", 2)] == ["m-c", "m-b"]


def test_memory_into_another_users_session_is_refused_whole(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    before = engine.status()["counts"]
    with pytest.raises(MemoryValidationError):
        engine.save_memory(memory("m-1", user_id="bob", session_id="s-1"))
    assert engine.status()["counts"] == before  # neither the memory nor a User bob
    assert engine.get_memory("m-1") is None
    assert version(engine, "s-1") == 0


def test_status_counts_every_node_kind(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1")
    engine.save_extraction("h1", "base", [{"name": "Orion", "entity_type": "project"}], [])
    engine.save_memory(memory("m-1"))
    assert engine.status()["counts"] == {
        "users": 1,
        "sessions": 1,
        "actions": 1,
        "memories": 1,
        "chunks": 1,
        "entities": 1,
    }


# -- sessions and actions ---------------------------------------------------------------
def test_every_content_change_bumps_the_version_by_one(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.start_session("s-1", "alice", T1, "/tmp", None)  # a repeat is not content
    assert version(engine, "s-1") == 0
    engine.save_memory(memory("m-1", session_id="s-1"))
    assert version(engine, "s-1") == 1
    assert engine.add_actions("s-1", "alice", [action("a-1"), action("a-2")]).added == 2
    assert version(engine, "s-1") == 2
    assert engine.add_actions("s-1", "alice", [action("a-1")]).added == 0
    assert version(engine, "s-1") == 2
    engine.update_memory("m-1", "changed", T1)
    assert version(engine, "s-1") == 3
    engine.save_memory(memory("m-2", session_id="s-1"))
    engine.delete_memory("m-2")
    assert version(engine, "s-1") == 5
    engine.end_session("s-1", T2)
    assert version(engine, "s-1") == 6
    engine.mark_pending("s-1")
    assert version(engine, "s-1") == 7
    [claimed] = engine.claim_sessions("run", 60, 10)
    assert claimed["content_version"] == 7
    engine.set_unit_chunks("action", A1, "c1", [{"hash": "h1", "text": "said a-1"}])
    engine.save_extraction("h1", "base", [{"name": "Orion"}], [])
    assert engine.finish_reconciliation("s-1", "run", "reconciled", T3, {"n": 1}, None)
    assert version(engine, "s-1") == 7


def test_a_sessions_memory_changes_are_content_but_no_action(engine: Engine) -> None:
    """Saving, updating and deleting one of a session's memories each moves
    its content version by one (the session is reconciled again) and leaves
    its action count alone."""
    engine.start_session("s-1", "alice", T0, None, None)
    engine.add_actions("s-1", "alice", [action("a-1")])
    counts = []
    for change in (
        lambda: engine.save_memory(memory("m-1", session_id="s-1")),
        lambda: engine.update_memory("m-1", "changed", T1),
        lambda: engine.delete_memory("m-1"),
    ):
        change()
        session = engine.get_session("s-1")
        assert session is not None
        counts.append((session["content_version"], session["action_count"]))
    assert counts == [(2, 1), (3, 1), (4, 1)]


def test_forgetting_a_user_counts_what_went_and_leaves_the_others(engine: Engine) -> None:
    for session_id, user_id, action_ids in (
        ("s-1", "alice", ["a-1", "a-2"]),
        ("s-2", "alice", ["a-3"]),
        ("s-b", "bob", ["a-1"]),
    ):
        engine.start_session(session_id, user_id, T0, None, None)
        engine.add_actions(session_id, user_id, [action(a) for a in action_ids])
    engine.save_memory(memory("m-1", session_id="s-1"))
    engine.save_memory(memory("m-2"))
    engine.save_memory(memory("m-b", user_id="bob"))
    assert engine.forget_user("alice") == {
        "sessions": 2,
        "actions": 3,
        "memories": 2,
        "chunks": 0,
        "entities": 0,
        "injections": 0,
        "users": 1,
    }
    assert engine.get_session("s-1") is None and engine.get_memory("m-2") is None
    assert engine.get_memory("m-b") is not None
    assert [a["action_id"] for a in engine.get_actions("s-b")] == ["a-1"]
    assert engine.forget_user("alice")["users"] == 0


def test_actions_for_an_unknown_session_date_it_by_the_first_action(engine: Engine) -> None:
    assert engine.add_actions("s-1", "bob", [action("a-1", T1), action("a-2", T2)]).added == 2
    session = engine.get_session("s-1")
    assert session is not None
    assert (session["user_id"], session["started_at"]) == ("bob", T1)
    assert (session["action_count"], session["content_version"]) == (2, 1)


def test_actions_for_another_users_session_are_refused_whole(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    before = engine.status()["counts"]
    with pytest.raises(MemoryValidationError):
        engine.add_actions("s-1", "bob", [action("a-1", T1)])
    assert engine.status()["counts"] == before
    assert engine.get_actions("s-1") == []


def test_an_action_id_of_another_session_is_skipped_not_refused(engine: Engine) -> None:
    """A resumed or forked agent session repeats entries another session recorded
    first: they stay that session's, the rest of the batch is recorded, and the
    skipped ones are counted."""
    engine.start_session("s-1", "alice", T0, None, None)
    engine.start_session("s-2", "alice", T0, None, None)
    assert engine.add_actions("s-1", "alice", [action("m-1", T1)]) == (1, 0)
    added = engine.add_actions("s-2", "alice", [action("m-1", T1), action("m-2", T1)])
    assert (added.added, added.foreign) == (1, 1)
    assert [(a["action_id"], a["seq"]) for a in engine.get_actions("s-2")] == [("m-2", 0)]
    assert [a["action_id"] for a in engine.get_actions("s-1")] == ["m-1"]
    assert version(engine, "s-2") == 1 and version(engine, "s-1") == 1
    assert engine.add_actions("s-2", "alice", [action("m-1", T1)]) == (0, 1)
    assert version(engine, "s-2") == 1  # nothing new: no content change
    assert engine.add_actions("s-1", "alice", [action("m-1", T1)]) == (0, 0)  # a redelivery


def test_ids_another_user_recorded_are_recorded_for_this_one_too(engine: Engine) -> None:
    """Action ids are per user: alice holding an id never holds back bob's."""
    engine.start_session("s-1", "alice", T0, None, None)
    engine.add_actions("s-1", "alice", [action("m-1", T1)])
    bobs = [action("m-1", T1, "bob's m-1"), action("b-1", T2)]
    assert engine.add_actions("s-b", "bob", bobs) == (2, 0)
    assert [(a["action_id"], a["text"]) for a in engine.get_actions("s-b")] == [
        ("m-1", "bob's m-1"),
        ("b-1", "said b-1"),
    ]
    assert [a["text"] for a in engine.get_actions("s-1")] == ["said m-1"]
    assert engine.add_actions("s-b", "bob", bobs) == (0, 0)  # a redelivery


def test_actions_for_a_known_session_create_no_user(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    before = engine.status()["counts"]["users"]
    assert engine.add_actions("s-1", "alice", [action("a-1", T1)]).added == 1
    assert engine.status()["counts"]["users"] == before
    session = engine.get_session("s-1")
    assert session is not None
    assert (session["user_id"], session["started_at"]) == ("alice", T0)
    assert [a["seq"] for a in engine.get_actions("s-1")] == [0]


def test_session_record_fields(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, "/home/alice", "proj")
    engine.add_actions("s-1", "alice", [action("a-1"), action("a-2"), action("a-3")])
    session = engine.get_session("s-1")
    assert session is not None and set(session) == SESSION_KEYS
    assert session["action_count"] == 3 and session["last_summary"] is None
    engine.claim_sessions("run", 60, 10, session_id="s-1")
    engine.finish_reconciliation("s-1", "run", "reconciled", T1, {"llm_calls": 2}, None)
    session = engine.get_session("s-1")
    assert session is not None
    assert session["last_summary"] == {"llm_calls": 2}
    assert (session["reconciliation_status"], session["reconciled_at"]) == ("reconciled", T1)


def test_pending_sessions_order_and_expired_claims(engine: Engine) -> None:
    for sid, started in (("s-a", T0), ("s-b", T1), ("s-c", T2), ("s-d", T0)):
        engine.start_session(sid, "alice", started, None, None)
    engine.end_session("s-a", T3)  # ended last: its end time orders it
    for sid in ("s-b", "s-c", "s-d"):
        engine.mark_pending(sid)
    # Same start time: session_id breaks the tie.
    assert [s["session_id"] for s in engine.pending_sessions(10)] == ["s-d", "s-b", "s-c", "s-a"]
    engine.claim_sessions("dead-run", -1, 1, session_id="s-b")  # a lease already expired
    engine.claim_sessions("live-run", 60, 1, session_id="s-c")
    pending = engine.pending_sessions(10)
    assert [s["session_id"] for s in pending] == ["s-d", "s-b", "s-a"]
    assert pending[1]["reconciliation_status"] == "running"
    assert set(pending[0]) == SESSION_KEYS


def test_failed_sessions_only_on_request(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.claim_sessions("run", 60, 1, session_id="s-1")
    engine.finish_reconciliation("s-1", "run", "failed", T1, None, "boom")
    assert engine.pending_sessions(10) == []
    assert [s["session_id"] for s in engine.pending_sessions(10, include_failed=True)] == ["s-1"]
    session = engine.get_session("s-1")
    assert session is not None and session["reconciliation_error"] == "boom"


def test_a_sweep_claims_only_waiting_sessions(engine: Engine) -> None:
    """A sweep takes pending sessions and those of expired leases; failed
    ones only when asked; never a reconciled one or one a live run holds."""
    for sid in ("s-new", "s-pending", "s-done", "s-failed", "s-live", "s-dead"):
        engine.start_session(sid, "alice", T0, None, None)  # never queued: no status
    engine.end_session("s-pending", T1)
    for sid, status in (("s-done", "reconciled"), ("s-failed", "failed")):
        engine.claim_sessions("run-0", 60, 1, session_id=sid)
        engine.finish_reconciliation(sid, "run-0", status, T1, None, None)
    engine.claim_sessions("run-live", 60, 1, session_id="s-live")
    engine.claim_sessions("run-dead", 0.05, 1, session_id="s-dead")
    time.sleep(0.1)

    swept = engine.claim_sessions("run-1", 60, 10)
    assert sorted(s["session_id"] for s in swept) == ["s-dead", "s-pending"]
    again = engine.claim_sessions("run-2", 60, 10, include_failed=True)
    assert [s["session_id"] for s in again] == ["s-failed"]


def test_claiming_a_named_session(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)  # never queued: no status
    [claimed] = engine.claim_sessions("run-1", 60, 10, session_id="s-1")
    assert claimed["reconciliation_status"] == "running" and set(claimed) == SESSION_KEYS
    assert engine.claim_sessions("run-2", 60, 10, session_id="s-1") == []  # live lease
    assert engine.claim_sessions("run-2", 60, 10, session_id="s-unknown") == []
    engine.finish_reconciliation("s-1", "run-1", "reconciled", T1, None, None)
    assert [s["session_id"] for s in engine.claim_sessions("run-2", 60, 10, session_id="s-1")] == [
        "s-1"
    ]
    assert engine.finish_reconciliation("s-1", "run-1", "reconciled", T2, None, None) is False


def test_a_run_finishes_only_the_sessions_it_holds(engine: Engine) -> None:
    """Holding one session's claim never lets a run mark another reconciled."""
    for session_id in ("s-1", "s-2"):
        engine.start_session(session_id, "alice", T0, None, None)
    assert engine.claim_sessions("run-1", 60, 10, session_id="s-1")
    assert engine.claim_sessions("run-2", 60, 10, session_id="s-2")
    assert engine.finish_reconciliation("s-2", "run-1", "reconciled", T1, None, None) is False
    session = engine.get_session("s-2")
    assert session is not None and session["reconciliation_status"] == "running"
    assert engine.finish_reconciliation("s-2", "run-2", "reconciled", T1, None, None) is True


def test_a_run_renews_only_its_own_claims(engine: Engine) -> None:
    """A renewal keeps the run's session past its lease and touches nothing
    else: not the run's other sessions, not another run's claim, not a
    session the run no longer holds."""
    for session_id in ("s-1", "s-2"):
        engine.start_session(session_id, "alice", T0, None, None)
        assert engine.claim_sessions("run-1", 0.3, 10, session_id=session_id)
    assert engine.renew_claim("s-1", "run-1", 60) is True
    assert engine.renew_claim("s-2", "run-2", 0) is False  # not run-2's claim
    time.sleep(0.4)  # past the first lease

    assert engine.claim_sessions("run-3", 60, 10, session_id="s-1") == []
    [taken] = engine.claim_sessions("run-3", 60, 10, session_id="s-2")
    assert taken["session_id"] == "s-2"
    assert engine.renew_claim("s-2", "run-1", 60) is False  # taken over
    assert engine.finish_reconciliation("s-1", "run-1", "reconciled", T1, None, None)
    assert engine.renew_claim("s-1", "run-1", 60) is False  # finished


def test_content_during_a_run_sends_the_session_back_to_pending(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.claim_sessions("run", 60, 1, session_id="s-1")
    engine.mark_pending("s-1")  # a run holds it: stays running, version moves
    session = engine.get_session("s-1")
    assert session is not None and session["reconciliation_status"] == "running"
    assert engine.finish_reconciliation("s-1", "run", "failed", T1, None, "boom")
    session = engine.get_session("s-1")
    assert session is not None
    assert (session["reconciliation_status"], session["reconciliation_error"]) == (
        "pending",
        "boom",
    )


# -- reconciliation ------------------------------------------------------------------------
def test_units_come_actions_by_seq_then_memories_by_age(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.save_memory(memory("m-b", session_id="s-1", at=T1))
    engine.save_memory(memory("m-a", session_id="s-1", at=T1))
    engine.save_memory(memory("m-0", session_id="s-1", at=T0))
    engine.add_actions("s-1", "alice", [action("a-2"), action("a-1")])
    engine.set_unit_chunks("memory", "m-a", "hash-of-m-a", [{"hash": "h", "text": "note m-a"}])
    units = engine.reconcilable_units("s-1")
    assert [(u["unit_kind"], u["unit_id"]) for u in units] == [
        ("action", action_key("alice", "a-2")),
        ("action", A1),
        ("memory", "m-0"),
        ("memory", "m-a"),
        ("memory", "m-b"),
    ]
    assert set(units[0]) == {"unit_kind", "unit_id", "text", "content_hash"}
    assert [u["content_hash"] for u in units][2:] == [None, "hash-of-m-a", None]


def test_a_chunk_repeated_in_a_unit_is_linked_once_at_its_last_place(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.add_actions("s-1", "alice", [action("a-1")])
    chunks = [{"hash": h, "text": h} for h in ("ha", "hb", "ha")]
    engine.set_unit_chunks("action", A1, "c", chunks)
    assert [c["hash"] for c in engine.unextracted_chunks("s-1", "base")] == ["hb", "ha"]
    assert engine.status()["counts"]["chunks"] == 2


def test_a_unit_chunked_again_keeps_its_chunks_and_drops_the_others(engine: Engine) -> None:
    """A unit whose text changed is chunked again: the chunks it still holds
    stay (their extraction is not redone), the ones it no longer holds and
    nothing else references are deleted."""
    engine.start_session("s-1", "alice", T0, None, None)
    engine.add_actions("s-1", "alice", [action("a-1")])
    engine.set_unit_chunks("action", A1, "c1", [{"hash": h, "text": h} for h in ("h1", "h2")])
    engine.set_unit_chunks("action", A1, "c2", [{"hash": h, "text": h} for h in ("h2", "h3")])
    assert [c["hash"] for c in engine.unextracted_chunks("s-1", "base")] == ["h2", "h3"]
    assert engine.status()["counts"]["chunks"] == 2


def test_relation_ends_the_chunk_did_not_list_become_entities(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1")
    engine.save_extraction(
        "h1",
        "base",
        [{"name": "Alice", "entity_type": "person", "description": "an engineer"}],
        [
            {
                "source": "Alice",
                "target": "Falcon",
                "description": "runs",
                "keywords": "ops",
                "weight": 2.0,
            }
        ],
    )
    found = {e["name"]: e for e in entities(engine, "s-1")}
    assert found["Falcon"] == {
        "name": "Falcon",
        "entity_type": None,
        "workspace": "base",
        "description": None,
        "mentions": 1,
    }
    assert found["Alice"]["description"] == "an engineer"
    assert [s["session_id"] for s in engine.entity_sessions("falcon", "alice")] == ["s-1"]


def test_entity_type_is_the_first_one_and_a_repeated_name_keeps_its_last_mention(
    engine: Engine,
) -> None:
    chunked_session(engine, "s-1", "alice", "h1", "h2")
    engine.save_extraction(
        "h1",
        "base",
        [
            {"name": "Orion", "entity_type": "project", "description": "first words"},
            {"name": "Orion", "entity_type": "mission", "description": "last words"},
        ],
        [],
    )
    engine.save_extraction(
        "h2", "base", [{"name": "Orion", "entity_type": "constellation", "description": ""}], []
    )
    [orion] = entities(engine, "s-1")
    assert orion["entity_type"] == "mission"  # h1's last word on it, h1 sorting first
    assert orion["description"] == "last words"
    assert orion["mentions"] == 2


def test_a_session_sees_entity_types_from_its_own_chunks_only(engine: Engine) -> None:
    chunked_session(engine, "s-alice", "alice", "h1")
    chunked_session(engine, "s-bob", "bob", "h2")
    engine.save_extraction("h2", "base", [{"name": "Nimbus", "entity_type": "bobs_secret"}], [])
    engine.save_extraction("h1", "base", [{"name": "Nimbus", "entity_type": "project"}], [])
    assert [e["entity_type"] for e in entities(engine, "s-alice")] == ["project"]
    assert [e["entity_type"] for e in entities(engine, "s-bob")] == ["bobs_secret"]


def test_chunks_for_a_unit_deleted_meanwhile_are_not_stored(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.save_memory(memory("m-1", session_id="s-1"))
    assert engine.delete_memory("m-1") is True
    engine.set_unit_chunks("memory", "m-1", "c1", [{"hash": "late", "text": "late"}])
    engine.set_unit_chunks(
        "action", action_key("alice", "never-was"), "c1", [{"hash": "late", "text": "late"}]
    )
    assert engine.status()["counts"]["chunks"] == 0
    assert engine.unextracted_chunks("s-1", "base") == []
    with pytest.raises(MemoryValidationError):
        engine.set_unit_chunks("session", "s-1", "c1", [{"hash": "x", "text": "x"}])


def test_reconciling_into_an_invalid_workspace_is_refused(graph: SessionsGraph) -> None:
    from reconcile_scripted import ScriptedLLM

    graph.record_actions("s-1", [action("a-1", text="Orion ships on Friday")], user_id="alice")
    graph.record_session_end("s-1")
    model = ScriptedLLM()
    for workspace in ("base`) DETACH DELETE n //", "1abc", "with space", ""):
        with pytest.raises(MemoryValidationError):
            graph.reconcile_session_sync(
                "s-1", entity_workspace=workspace or "x y", llm_model_func=model
            )
    assert model.calls == 0
    assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]


def test_session_entities_join_distinct_descriptions_by_chunk_hash(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "hc", "ha", "hb", "hd")
    for chunk_hash, description in (
        ("hc", "from c"),
        ("ha", "from a"),
        ("hb", "from c"),
        ("hd", None),
    ):
        engine.save_extraction(
            chunk_hash,
            "base",
            [
                {"name": "Zed", "entity_type": "x", "description": description},
                {"name": "Abe", "description": "sorts first"},
            ],
            [],
        )
    engine.save_extraction("ha", "other", [{"name": "Zed", "description": "elsewhere"}], [])
    found = entities(engine, "s-1")
    assert [(e["name"], e["workspace"]) for e in found] == [
        ("Abe", "base"),
        ("Zed", "base"),
        ("Zed", "other"),
    ]
    assert found[1]["description"] == "from a\nfrom c"
    assert found[1]["mentions"] == 4
    assert (found[2]["description"], found[2]["mentions"]) == ("elsewhere", 1)


def test_a_session_sees_only_its_own_mentions(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1")
    chunked_session(engine, "s-2", "bob", "h2")
    engine.save_extraction("h1", "base", [{"name": "Falcon", "description": "alice's"}], [])
    engine.save_extraction("h2", "base", [{"name": "Falcon", "description": "bob's"}], [])
    [falcon] = entities(engine, "s-1")
    assert (falcon["description"], falcon["mentions"]) == ("alice's", 1)
    assert engine.entity_sessions("Falcon", "alice")[0]["session_id"] == "s-1"
    assert len(engine.entity_sessions("Falcon", "alice")) == 1


def test_entity_sessions_casefolds_and_puts_the_latest_activity_first(engine: Engine) -> None:
    chunked_session(engine, "s-old", "alice", "h1", at=T0)
    chunked_session(engine, "s-new", "alice", "h2", at=T1)
    chunked_session(engine, "s-tie", "alice", "h3", at=T1)
    engine.end_session("s-old", T3)  # started first, but active last
    for chunk_hash in ("h1", "h2", "h3"):
        engine.save_extraction(chunk_hash, "base", [{"name": "Straße"}], [])
    assert [s["session_id"] for s in engine.entity_sessions("STRASSE", "alice")] == [
        "s-old",
        "s-tie",
        "s-new",
    ]
    assert set(engine.entity_sessions("straße", "alice")[0]) == SESSION_KEYS
    assert engine.entity_sessions("Straße", "bob") == []


def test_user_entity_mentions_counts_each_sessions_names_in_one_read(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1", "h2", "h3")
    chunked_session(engine, "s-2", "alice", "h2", "h4")
    engine.save_memory(memory("m-1", session_id="s-2"))
    engine.set_unit_chunks("memory", "m-1", "c-m1", [{"hash": "hm", "text": "hm"}])
    # h1 gives no type; h2, first by hash order after it, gives "bird".
    engine.save_extraction("h1", "base", [{"name": "Falcon"}], [])
    engine.save_extraction("h2", "base", [{"name": "Falcon", "entity_type": "bird"}], [])
    engine.save_extraction("h3", "base", [{"name": "Falcon", "entity_type": "rocket"}], [])
    engine.save_extraction("h3", "other", [{"name": "Falcon", "entity_type": "car"}], [])
    engine.save_extraction("h4", "base", [{"name": "Orion", "entity_type": "ship"}], [])
    engine.save_extraction("hm", "base", [{"name": "Orion"}], [])
    rows = engine.user_entity_mentions("alice", ["s-1", "s-2", "s-unknown"])
    assert [(r["session_id"], r["name"], r["entity_type"], r["mentions"]) for r in rows] == [
        ("s-1", "Falcon", "bird", 4),  # h1, h2, h3 in base and h3 in other
        ("s-2", "Falcon", "bird", 1),
        ("s-2", "Orion", "ship", 2),  # an action's chunk and the session memory's
    ]
    # The same counts as reading each session's mentions on its own.
    for session_id in ("s-1", "s-2"):
        own = {e["name"]: 0 for e in entities(engine, session_id)}
        for e in entities(engine, session_id):
            own[e["name"]] += e["mentions"]
        assert own == {r["name"]: r["mentions"] for r in rows if r["session_id"] == session_id}
    assert engine.user_entity_mentions("alice", ["s-2"]) == rows[1:]
    assert engine.user_entity_mentions("alice", []) == []


def test_user_entity_mentions_reads_only_the_users_own_chunks(engine: Engine) -> None:
    chunked_session(engine, "s-a", "alice", "h1")
    chunked_session(engine, "s-b", "bob", "h1", "h2")
    engine.save_memory(memory("m-b", user_id="bob"))
    engine.set_unit_chunks("memory", "m-b", "c-mb", [{"hash": "h3", "text": "h3"}])
    for chunk_hash in ("h1", "h2", "h3"):
        engine.save_extraction(chunk_hash, "base", [{"name": "Falcon", "entity_type": "x"}], [])
    # bob's session asked for by alice gives nothing; alice's gives her chunk only.
    assert engine.user_entity_mentions("alice", ["s-a", "s-b"]) == [
        {"session_id": "s-a", "name": "Falcon", "entity_type": "x", "mentions": 1}
    ]
    assert engine.user_entity_mentions("bob", ["s-a"]) == []
    assert [r["mentions"] for r in engine.user_entity_mentions("bob", ["s-b"])] == [2]


def test_saving_a_chunk_again_replaces_what_it_said(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1")
    engine.save_extraction(
        "h1", "base", [{"name": "Orion"}, {"name": "Vega"}], [{"source": "Orion", "target": "Vega"}]
    )
    assert engine.status()["counts"]["entities"] == 2
    engine.save_extraction("h1", "base", [{"name": "Orion", "description": "again"}], [])
    assert [(e["name"], e["description"]) for e in entities(engine, "s-1")] == [("Orion", "again")]
    assert engine.status()["counts"]["entities"] == 1
    assert engine.unextracted_chunks("s-1", "base") == []
    assert [c["hash"] for c in engine.unextracted_chunks("s-1", "other")] == ["h1"]


def test_deleting_a_memory_collects_its_chunks_and_entities(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.save_memory(memory("m-1", session_id="s-1"))
    engine.save_memory(memory("m-2", session_id="s-1"))
    engine.set_unit_chunks(
        "memory",
        "m-1",
        "c1",
        [{"hash": "own", "text": "own"}, {"hash": "shared", "text": "shared"}],
    )
    engine.set_unit_chunks("memory", "m-2", "c2", [{"hash": "shared", "text": "shared"}])
    engine.save_extraction("own", "base", [{"name": "Orion"}, {"name": "Vega"}], [])
    engine.save_extraction("shared", "base", [{"name": "Vega"}], [])

    assert engine.delete_memory("m-1") is True

    counts = engine.status()["counts"]
    assert (counts["chunks"], counts["entities"]) == (1, 1)
    assert [e["name"] for e in entities(engine, "s-1")] == ["Vega"]
    assert engine.entity_sessions("Orion", "alice") == []
    assert engine.delete_memory("m-1") is False


# -- forgetting --------------------------------------------------------------------------
def test_forgetting_chunks_no_extraction_named_counts_no_entity(engine: Engine) -> None:
    """Chunks deleted with their session, none ever extracted: chunks counted,
    entities none (an engine must not count an entity for a chunk that named none)."""
    chunked_session(engine, "s-1", "alice", "h1", "h2")
    chunked_session(engine, "s-2", "alice", "h3")
    chunked_session(engine, "s-bare", "alice")  # no action, no chunk
    counts = engine.forget_session("s-1")
    assert (counts["chunks"], counts["entities"]) == (2, 0)
    assert engine.status()["counts"]["chunks"] == 1  # s-2's stays
    counts = engine.forget_session("s-bare")
    assert (counts["sessions"], counts["chunks"], counts["entities"]) == (1, 0, 0)


def test_a_failed_session_is_claimed_again_only_when_asked(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.end_session("s-1", T1)
    assert [s["session_id"] for s in engine.claim_sessions("run", 60, 10)] == ["s-1"]
    assert engine.finish_reconciliation("s-1", "run", "failed", T2, None, "boom")
    assert engine.claim_sessions("run-2", 60, 10) == []  # failed: not by default
    claimed = engine.claim_sessions("run-2", 60, 10, include_failed=True)
    assert [s["session_id"] for s in claimed] == ["s-1"]


def test_forget_counts_have_the_same_keys_and_meaning(engine: Engine) -> None:
    chunked_session(engine, "s-1", "alice", "h1", "shared")
    chunked_session(engine, "s-2", "alice", "h2")
    chunked_session(engine, "s-3", "bob", "shared")
    engine.save_memory(memory("m-1", session_id="s-1"))
    engine.save_memory(memory("m-2"))
    engine.set_unit_chunks("memory", "m-2", "c", [{"hash": "hm", "text": "hm"}])
    engine.save_extraction("h1", "base", [{"name": "Orion"}], [])
    engine.save_extraction("shared", "base", [{"name": "Vega"}], [])
    engine.save_extraction("hm", "base", [{"name": "Lyra"}], [])

    counts = engine.forget_session("s-1")
    assert list(counts) == ["sessions", "actions", "memories", "chunks", "entities", "injections"]
    assert counts == {
        "sessions": 1,
        "actions": 2,
        "memories": 1,
        "chunks": 1,
        "entities": 1,
        "injections": 0,
    }
    assert engine.forget_session("s-1") == dict.fromkeys(counts, 0)

    counts = engine.forget_user("alice")
    assert list(counts) == [
        "sessions",
        "actions",
        "memories",
        "chunks",
        "entities",
        "injections",
        "users",
    ]
    assert counts == {
        "sessions": 1,
        "actions": 1,
        "memories": 1,
        "chunks": 2,
        "entities": 1,
        "injections": 0,
        "users": 1,
    }
    assert engine.status()["counts"] == {
        "users": 1,
        "sessions": 1,
        "actions": 1,
        "memories": 0,
        "chunks": 1,
        "entities": 1,
    }
    assert engine.forget_user("alice") == {**dict.fromkeys(counts, 0)}


# -- interactions -------------------------------------------------------------------------
def _unanswered(interaction_id: str, user_id: str, expires_at: str | None) -> dict[str, Any]:
    """An interaction of session s-1, asked at T0 and not answered yet."""
    return {
        "interaction_id": interaction_id,
        "user_id": user_id,
        "session_id": "s-1",
        "source": "recall",
        "created_at": T0,
        "expires_at": expires_at,
        "question": "which cache?",
        "context": [],
        "answer": None,
        "feedback": None,
        "seq_from": 0,
    }


def test_only_the_users_live_interaction_is_answered_or_rated(engine: Engine) -> None:
    """``answer_interaction`` and ``rate_interaction`` say whether they did:
    never for another user's interaction, an unknown one or one past its
    expiry, which keep no answer and teach no weight."""
    for interaction_id, expires_at in (("i-live", None), ("i-expired", T1)):
        engine.save_interaction(_unanswered(interaction_id, "alice", expires_at))
    assert engine.answer_interaction("i-live", "bob", "valkey", T2, []) is False
    assert engine.answer_interaction("i-none", "alice", "valkey", T2, []) is False
    assert engine.answer_interaction("i-expired", "alice", "valkey", T2, []) is False
    assert engine.get_interaction("i-live", "alice", T2)["answer"] is None
    assert engine.answer_interaction("i-live", "alice", "valkey", T2, []) is True
    assert engine.get_interaction("i-live", "alice", T2)["answer"] == "valkey"
    for interaction_id, user_id in (("i-live", "bob"), ("i-none", "alice"), ("i-expired", "alice")):
        assert engine.rate_interaction(interaction_id, user_id, 5, ["turn:t"], 0.5, T2) is False
    assert engine.feedback_weights("alice", ["turn:t"]) == {}
    assert engine.feedback_weights("bob", ["turn:t"]) == {}
    assert engine.rate_interaction("i-live", "alice", 5, ["turn:t"], 0.5, T2) is True
    assert engine.feedback_weights("alice", ["turn:t"]) == {"turn:t": 0.75}
    # The usage counts only the live one.
    [usage] = engine.interaction_usage("alice", T2, 10)
    assert (usage["interactions"], usage["answered"], usage["rated"]) == (1, 1, 1)


def test_the_sweep_deletes_only_expired_interactions(engine: Engine) -> None:
    """``expire_interactions`` deletes the interactions whose expiry has
    passed, whoever's they are, and keeps the live ones and those kept for
    good (no expiry)."""
    for interaction_id, user_id, expires_at in (
        ("i-expired", "alice", T1),
        ("i-bobs-expired", "bob", T1),
        ("i-live", "alice", T3),
        ("i-kept", "alice", None),
    ):
        engine.save_interaction(_unanswered(interaction_id, user_id, expires_at))
    assert engine.expire_interactions(T2) == 2
    assert engine.expire_interactions(T2) == 0
    left = [i["interaction_id"] for i in engine.list_interactions("alice", None, T2, 10)]
    assert sorted(left) == ["i-kept", "i-live"]
