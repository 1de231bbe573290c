"""When an entity goes, on every engine: only when nothing holds it any more.

On Memgraph a workspace may also hold LightRAG's own parts and edges
(tests/test_lightrag_coexistence.py); what both engines share is checked
here: an entity stays while any chunk mentions it, a relation end no chunk
mentions any more goes, and re-extracting a chunk replaces only what that
chunk said."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import Engine

T0 = "2026-01-01T00:00:00+00:00"


@pytest.fixture
def engine(graph: SessionsGraph) -> Engine:
    return graph.engine


def _memory_with_chunk(engine: Engine, memory_id: str, session_id: str, chunk: str) -> None:
    engine.save_memory(
        {
            "memory_id": memory_id,
            "user_id": "alice",
            "content": f"note {memory_id}",
            "session_id": session_id,
            "created_at": T0,
            "updated_at": T0,
        }
    )
    engine.set_unit_chunks("memory", memory_id, memory_id, [{"hash": chunk, "text": chunk}])


def _names(engine: Engine, session_id: str) -> list[tuple[str, Any]]:
    return sorted((m["name"], m["description"]) for m in engine.session_mentions(session_id))


def test_an_entity_stays_while_another_chunk_mentions_it(engine: Engine) -> None:
    engine.start_session("s-1", "alice", T0, None, None)
    engine.start_session("s-2", "alice", T0, None, None)
    _memory_with_chunk(engine, "m-1", "s-1", "c1")
    _memory_with_chunk(engine, "m-2", "s-2", "c2")
    relation = {"source": "Orion", "target": "Vega", "description": "near", "keywords": "sky"}
    engine.save_extraction("c1", "base", [{"name": "Orion", "description": "hunter"}], [relation])
    engine.save_extraction("c2", "base", [{"name": "Vega", "description": "bright"}], [relation])
    assert engine.status()["counts"]["entities"] == 2

    counts = engine.forget_session("s-1")
    assert counts["entities"] == 0  # c2 still names both ends of its relation
    assert _names(engine, "s-2") == [("Orion", None), ("Vega", "bright")]

    # c2 is re-extracted without the relation: Orion has no mention left.
    engine.save_extraction("c2", "base", [{"name": "Vega", "description": "brightest"}], [])
    assert engine.status()["counts"]["entities"] == 1
    assert _names(engine, "s-2") == [("Vega", "brightest")]
    assert engine.entity_sessions("Orion", "alice") == []
    assert [s["session_id"] for s in engine.entity_sessions("vega", "alice")] == ["s-2"]

    assert engine.forget_session("s-2")["entities"] == 1
    assert engine.status()["counts"]["entities"] == 0
