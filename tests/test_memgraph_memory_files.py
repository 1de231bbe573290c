"""The Memgraph engine's memory-file operations without a server: each of
the named statements they send is carried out on an in-memory store, so the
engine's own part (conflicts, versions kept, stale writes, directories) runs
the memory-tool contract tests unchanged. The Cypher itself is checked
against Memgraph's documentation (docs/memgraph.md), not here."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import test_contract_memory_tool as contract
from memgraph_fakes import fake_engine

from sessions_graph import SessionsGraph, cypher
from sessions_graph.settings import Settings


class MemoryFileStatements:
    """Answers the statements the memory-file operations send (and the few
    plain memory and session ones they share)."""

    def __init__(self) -> None:
        self.memories: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.by_text = {cypher.load(n): n for n in cypher.names()}

    def __call__(self, statement: str, params: dict[str, Any]) -> Any:
        name = self.by_text.get(statement)
        if name is None:  # schema and server statements
            return []
        handler = getattr(self, name.replace("/", "__"), None)
        if handler is None:
            raise AssertionError(f"statement {name} not emulated")
        return handler(**params)

    def _files(self, user_id: str) -> list[dict[str, Any]]:
        return [m for m in self.memories.values() if m.get("path") and m["user_id"] == user_id]

    @staticmethod
    def _row(m: dict[str, Any], *keys: str) -> dict[str, Any]:
        return {k: m.get(k) for k in keys}

    # -- memory, session -------------------------------------------------------------
    def memory__save(self, user_key: str, **memory: Any) -> Any:
        self.memories[memory["memory_id"]] = dict(memory)
        return []

    def memory__link_session(self, **_: Any) -> Any:
        return []

    def memory__get(self, memory_id: str, user_id: str | None) -> Any:
        m = self.memories.get(memory_id)
        if m is None or (user_id is not None and m["user_id"] != user_id):
            return []
        return [self._row(m, *_MEMORY)]

    def memory__list_by_user(self, user_id: str, limit: int) -> Any:
        rows = [m for m in self.memories.values() if m["user_id"] == user_id]
        rows.sort(key=lambda m: (m["created_at"], m["memory_id"]), reverse=True)
        return [self._row(m, *_MEMORY) for m in rows[:limit]]

    def memory__delete(self, memory_id: str, user_id: str | None) -> Any:
        m = self.memories.get(memory_id)
        if m is None or (user_id is not None and m["user_id"] != user_id):
            return []
        del self.memories[memory_id]
        return [{"session_id": m["session_id"], "chunk_hashes": []}]

    def session__ensure(self, session_id: str, user_id: str, now: str) -> Any:
        s = self.sessions.setdefault(session_id, {"user_id": user_id, "version": 0})
        return [{"owner": s["user_id"]}]

    def session__link_user(self, **_: Any) -> Any:
        return []

    def session__touch(self, session_id: str, **_: Any) -> Any:
        self.sessions[session_id]["version"] += 1
        return []

    # -- memory files ------------------------------------------------------------------
    def memory_file__conflicts(
        self, user_id: str, path: str, under: str, parents: list[str]
    ) -> Any:
        return [
            {"path": m["path"]}
            for m in self._files(user_id)
            if m["path"] == path or m["path"].startswith(under) or m["path"] in parents
        ]

    def memory_file__mark(
        self, memory_id: str, file_key: str, path: str, versions: list[dict[str, Any]]
    ) -> Any:
        m = self.memories[memory_id]
        assert all(v is not None for version in versions for v in version.values())
        m.update(file_key=file_key, path=path, version=1, versions=versions)
        return []

    def memory_file__get(self, file_key: str) -> Any:
        found = [m for m in self.memories.values() if m.get("file_key") == file_key]
        assert len(found) <= 1  # the unique constraint
        return [self._row(m, *_MEMORY, "path", "version", "versions") for m in found]

    def memory_file__list(self, user_id: str, path: str, under: str) -> Any:
        rows = [
            {
                **self._row(m, "path", "memory_id", "updated_at", "version"),
                "size": len(m["content"]),
            }
            for m in self._files(user_id)
            if m["path"] == path or m["path"].startswith(under)
        ]
        return sorted(rows, key=lambda r: r["path"])

    def memory_file__write(
        self,
        file_key: str,
        expected_version: int,
        content: str,
        updated_at: str,
        versions: list[dict[str, Any]],
    ) -> Any:
        for m in self.memories.values():
            if m.get("file_key") == file_key and m["version"] == expected_version:
                m.update(
                    content=content,
                    updated_at=updated_at,
                    versions=versions,
                    version=expected_version + 1,
                )
                return [{"session_id": m["session_id"]}]
        return []

    def memory_file__at_or_under(self, user_id: str, path: str, under: str) -> Any:
        return [
            self._row(m, "memory_id", "path", "version", "content", "versions")
            for m in self._files(user_id)
            if m["path"] == path or m["path"].startswith(under)
        ]

    def memory_file__move(self, memory_id: str, **props: Any) -> Any:
        self.memories[memory_id].update(props)
        return []


_MEMORY = ("memory_id", "user_id", "content", "session_id", "created_at", "updated_at")


@pytest.fixture
def graph(tmp_path: Any) -> Iterator[SessionsGraph]:
    engine, _ = fake_engine(MemoryFileStatements())
    yield SessionsGraph(engine=engine, settings=Settings(db=str(tmp_path / "unused.db")))


CONTRACT: list[Callable[..., None]] = [
    contract.test_create_view_and_list,
    contract.test_str_replace,
    contract.test_insert,
    contract.test_delete_a_file_or_a_directory,
    contract.test_rename_a_file_or_a_directory,
    contract.test_oversized_and_empty_files_are_refused,
    contract.test_the_newest_versions_are_kept_with_their_sessions,
    contract.test_users_are_isolated,
    contract.test_editing_a_file_never_touches_another_users_file_at_the_same_path,
    contract.test_clear_all_memory_deletes_only_the_users_files,
    contract.test_a_write_on_a_stale_version_changes_nothing,
    contract.test_create_reports_what_is_in_the_way,
]


@pytest.mark.parametrize("case", CONTRACT, ids=lambda f: f.__name__)
def test_memgraph_memory_files_meet_the_contract(
    graph: SessionsGraph, case: Callable[..., None]
) -> None:
    case(graph)
