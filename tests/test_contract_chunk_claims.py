"""Chunk claims, on every engine: how runs in different processes share the
extraction of one chunk (``Engine.claim_chunks``).

Engine-level, with fixed owners and hashes; leases that must run out are a
few hundredths of a second long.
"""

from __future__ import annotations

import time

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import Engine, action_key

T0 = "2026-11-29T10:00:00.000000+00:00"
LEASE = 60.0
SHORT_LEASE = 0.05


@pytest.fixture
def engine(graph: SessionsGraph) -> Engine:
    return graph.engine


#: The key of alice's action s-1-h1, which ``set_unit_chunks`` takes.
S1_H1 = action_key("alice", "s-1-h1")


def chunked_session(engine: Engine, session_id: str, *hashes: str) -> None:
    """A session with one action per chunk hash, each action chunked to it."""
    engine.start_session(session_id, "alice", T0, None, None)
    engine.add_actions(
        session_id,
        "alice",
        [
            {
                "action_id": f"{session_id}-{h}",
                "action_type": "tool_result",
                "text": f"said {h}",
                "timestamp": None,
                "tool_name": None,
                "tool_use_id": None,
                "is_error": False,
            }
            for h in hashes
        ],
    )
    for h in hashes:
        engine.set_unit_chunks(
            "action", action_key("alice", f"{session_id}-{h}"), f"c-{h}", [{"hash": h, "text": h}]
        )


def test_a_live_claim_keeps_other_owners_out(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1", "h2", "h3")

    assert engine.claim_chunks(["h1", "h2"], "base", "run-a", LEASE) == {"h1", "h2"}
    assert engine.claim_chunks(["h1", "h2", "h3"], "base", "run-b", LEASE) == {"h3"}
    assert engine.claim_chunks(["h1", "h2", "h3"], "base", "run-b", LEASE) == {"h3"}  # renewed
    assert engine.claim_chunks(["h1", "h2", "h3"], "base", "run-a", LEASE) == {"h1", "h2"}
    assert engine.claim_chunks([], "base", "run-a", LEASE) == set()


def test_claims_are_per_workspace(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")

    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == {"h1"}
    assert engine.claim_chunks(["h1"], "spare", "run-b", LEASE) == {"h1"}
    assert engine.claim_chunks(["h1"], "spare", "run-a", LEASE) == set()


def test_unknown_chunks_are_never_claimed(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")

    assert engine.claim_chunks(["h1", "nope"], "base", "run-a", LEASE) == {"h1"}


def test_an_expired_claim_is_taken_over(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1", "h2")
    assert engine.claim_chunks(["h1"], "base", "dead-run", SHORT_LEASE) == {"h1"}
    assert engine.claim_chunks(["h2"], "base", "live-run", LEASE) == {"h2"}

    time.sleep(SHORT_LEASE * 2)

    assert engine.claim_chunks(["h1", "h2"], "base", "run-b", LEASE) == {"h1"}
    assert engine.claim_chunks(["h1"], "base", "dead-run", LEASE) == set()


def test_a_renewed_claim_outlives_its_first_lease(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")
    assert engine.claim_chunks(["h1"], "base", "run-a", SHORT_LEASE) == {"h1"}

    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == {"h1"}
    time.sleep(SHORT_LEASE * 2)

    assert engine.claim_chunks(["h1"], "base", "run-b", LEASE) == set()


def test_a_zero_lease_gives_the_claim_up(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")
    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == {"h1"}

    assert engine.claim_chunks(["h1"], "base", "run-a", 0.0) == {"h1"}
    time.sleep(0.01)

    assert engine.claim_chunks(["h1"], "base", "run-b", LEASE) == {"h1"}


def test_extracted_chunks_are_never_claimable(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")
    engine.save_extraction("h1", "base", [], [])

    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == set()
    assert engine.claim_chunks(["h1"], "spare", "run-a", LEASE) == {"h1"}


def test_extraction_ends_the_claim_in_its_workspace_only(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")
    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == {"h1"}
    assert engine.claim_chunks(["h1"], "spare", "run-a", LEASE) == {"h1"}

    engine.save_extraction("h1", "base", [{"name": "Orion", "entity_type": "project"}], [])

    assert engine.claim_chunks(["h1"], "base", "run-a", LEASE) == set()  # not even renewed
    assert engine.claim_chunks(["h1"], "spare", "run-b", LEASE) == set()
    assert engine.unextracted_chunks("s-1", "base") == []


def test_a_name_in_two_workspaces_is_two_entities(engine: Engine) -> None:
    """Saving a chunk's extraction in one workspace links the name to that
    workspace's entity, never to the same name of another workspace."""
    chunked_session(engine, "s-1", "h1", "h2")
    engine.save_extraction("h1", "base", [{"name": "Orion", "entity_type": "project"}], [])
    engine.save_extraction("h2", "spare", [{"name": "Orion", "entity_type": "star"}], [])

    found = {(m["name"], m["workspace"], m["chunk_hash"]) for m in engine.session_mentions("s-1")}
    assert found == {("Orion", "base", "h1"), ("Orion", "spare", "h2")}


def test_deleting_a_chunks_last_unit_removes_its_claim(engine: Engine) -> None:
    chunked_session(engine, "s-1", "h1")
    engine.save_memory(
        {
            "memory_id": "m-1",
            "user_id": "alice",
            "content": "h2",
            "session_id": "s-1",
            "created_at": T0,
            "updated_at": T0,
        }
    )
    engine.set_unit_chunks("memory", "m-1", "c-h2", [{"hash": "h2", "text": "h2"}])
    assert engine.claim_chunks(["h1", "h2"], "base", "run-a", LEASE) == {"h1", "h2"}

    engine.delete_memory("m-1")  # h2's last unit: the chunk is collected
    engine.set_unit_chunks("action", S1_H1, "c-h1-changed", [{"hash": "h3", "text": "h3"}])
    assert engine.claim_chunks(["h1", "h2"], "base", "run-b", LEASE) == set()  # both gone

    # The same texts stored again are new chunks: no claim of run-a survives.
    engine.set_unit_chunks(
        "action", S1_H1, "c-back", [{"hash": "h1", "text": "h1"}, {"hash": "h2", "text": "h2"}]
    )
    assert engine.claim_chunks(["h1", "h2"], "base", "run-b", LEASE) == {"h1", "h2"}


def test_a_named_session_is_taken_once_its_runs_lease_is_out(engine: Engine) -> None:
    """``reconcile --session`` after a killed run: a live lease keeps the
    session, an expired one gives it up."""
    engine.start_session("s-1", "alice", "2024-05-01T10:00:00Z", None, None)
    engine.end_session("s-1", "2024-05-01T11:00:00Z")
    assert [s["session_id"] for s in engine.claim_sessions("run-1", 0.5, 1, session_id="s-1")]
    assert engine.claim_sessions("run-2", 60, 1, session_id="s-1") == []
    time.sleep(0.6)
    assert [s["session_id"] for s in engine.claim_sessions("run-2", 60, 1, session_id="s-1")] == [
        "s-1"
    ]
