"""The calls users of Memgraph's sessions-graph 0.11 make, with its own
signatures: ``save_memory(user_id, content, session_id=..., memory_id=...,
path=...)`` and ``recall(user_id, question=...)``. A caller-chosen memory id
already in use is a clear error that changes nothing, on every engine."""

from __future__ import annotations

import pytest

from sessions_graph import (
    MemoryFileError,
    MemoryIdTakenError,
    MemoryValidationError,
    SessionsGraph,
)
from sessions_graph.agent.memory_files import MemoryFiles


def test_every_shared_method_takes_upstreams_signature(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    saved = graph.save_memory(
        "alice", "Prefers the zeppelin layout", session_id="s-1", memory_id="imported-1"
    )
    assert saved.memory_id == "imported-1" and saved.session_id == "s-1"
    stored = graph.get_memory("imported-1", user_id="alice")
    assert stored is not None and stored.content == "Prefers the zeppelin layout"

    in_file = graph.save_memory(
        "alice",
        "Deploys go through the blue pipeline",
        session_id="s-1",
        memory_id="imported-2",
        path="/memories/deploys.md",
    )
    assert in_file.memory_id == "imported-2"
    memory_file = MemoryFiles(graph, "alice").read("/memories/deploys.md")
    assert (memory_file.memory_id, memory_file.version, memory_file.content) == (
        "imported-2",
        1,
        "Deploys go through the blue pipeline",
    )

    result = graph.recall("alice", question="what about the zeppelin layout?")
    assert "imported-1" in {h.memory_id for h in result.hits}
    assert result.query == "what about the zeppelin layout?"


def test_a_memory_id_in_use_is_refused_and_changes_nothing(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "the first one", memory_id="m-taken")
    before = graph.engine.status()["counts"]
    for call in (
        lambda: graph.save_memory("bob", "bob's attempt", memory_id="m-taken"),
        lambda: graph.save_memory("alice", "again", memory_id="m-taken", session_id="s-new"),
        lambda: graph.save_memory("bob", "a file", memory_id="m-taken", path="/memories/a.md"),
    ):
        with pytest.raises(MemoryIdTakenError, match="already in use") as raised:
            call()
        assert "alice" not in str(raised.value)  # never says whose id it is
    assert graph.engine.status()["counts"] == before
    assert graph.get_session("s-new") is None
    assert MemoryFiles(graph, "bob").get("/memories/a.md") is None
    stored = graph.get_memory("m-taken")
    assert stored is not None and (stored.user_id, stored.content) == ("alice", "the first one")


def test_a_path_taken_or_outside_the_memory_directory_is_refused(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "notes", path="/memories/notes.md")
    with pytest.raises(MemoryFileError, match="already exists"):
        graph.save_memory("alice", "other notes", path="/memories/notes.md")
    with pytest.raises(MemoryFileError, match="outside /memories"):
        graph.save_memory("alice", "x", path="/etc/passwd")
    assert [m.content for m in graph.get_memories("alice")] == ["notes"]
    # Another user's file at the same path is another file.
    graph.save_memory("bob", "bob's notes", path="/memories/notes.md")
    assert MemoryFiles(graph, "bob").read("/memories/notes.md").content == "bob's notes"


def test_recall_takes_a_query_or_a_question_not_both(graph: SessionsGraph) -> None:
    with pytest.raises(MemoryValidationError):
        graph.recall("alice", "x", question="y")
    with pytest.raises(MemoryValidationError):
        graph.recall("alice")
