"""Memory files on the Memgraph engine.

A memory file is its Memory node with the MemoryFile label, a path and a
file_key (user_id + "|" + path) unique under that label, so two processes
creating one path collide at commit and the retry sees the file. Its kept
versions are a list of maps on the node (it goes with the node), replaced
whole on every write.

The mixin reaches the plumbing (``_read``, ``_write``) and the other concerns'
steps (``_save_memory``, ``_ensure_session``, ``_touch``,
``_collect_garbage``) through ``self``; the plumbing comes from ``engine.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sessions_graph.engines.base import Record
from sessions_graph.engines.memgraph.rows import _rows


class MemoryFiles:
    """Create, read, write, rename and delete memory files; their versions."""

    def get_memory_file(self, user_id: str, path: str) -> Record | None:
        rows = self._read("memory_file/get", file_key=_file_key(user_id, path))
        if not rows:
            return None
        row = rows[0]
        del row["versions"]
        return row

    def list_memory_files(self, user_id: str, prefix: str) -> list[Record]:
        return self._read("memory_file/list", user_id=user_id, path=prefix, under=prefix + "/")

    @staticmethod
    def _file_conflict(tx: Any, user_id: str, path: str, parents: Sequence[str]) -> str | None:
        found = {
            r["path"]
            for r in _rows(
                tx,
                "memory_file/conflicts",
                user_id=user_id,
                path=path,
                under=path + "/",
                parents=list(parents),
            )
        }
        if path in found:
            return "exists"
        if any(p.startswith(path + "/") for p in found):
            return "directory"
        return "parent" if found else None

    def create_memory_file(
        self, memory: Record, path: str, parents: Sequence[str], keep_versions: int
    ) -> str:
        content, created = memory["content"], memory["created_at"]
        first = _kept_versions([], 1, path, content, memory["session_id"], created, keep_versions)

        def work(tx: Any) -> str:
            conflict = self._file_conflict(tx, memory["user_id"], path, parents)
            if conflict:
                return conflict
            self._save_memory(tx, memory)
            _rows(
                tx,
                "memory_file/mark",
                memory_id=memory["memory_id"],
                file_key=_file_key(memory["user_id"], path),
                path=path,
                versions=first,
            )
            return "created"

        return self._write(work)

    def write_memory_file(
        self,
        user_id: str,
        path: str,
        content: str,
        session_id: str | None,
        updated_at: str,
        expected_version: int,
        keep_versions: int,
    ) -> Record | None:
        key = _file_key(user_id, path)

        def work(tx: Any) -> bool:
            rows = _rows(tx, "memory_file/get", file_key=key)
            if not rows or rows[0]["version"] != expected_version:
                return False
            if session_id:
                self._ensure_session(tx, session_id, user_id, updated_at)
            versions = _kept_versions(
                rows[0]["versions"] or [],
                expected_version + 1,
                path,
                content,
                session_id,
                updated_at,
                keep_versions,
            )
            written = _rows(
                tx,
                "memory_file/write",
                file_key=key,
                expected_version=expected_version,
                content=content,
                updated_at=updated_at,
                versions=versions,
            )
            if written and written[0]["session_id"]:
                self._touch(tx, written[0]["session_id"])
            return bool(written)

        return self.get_memory_file(user_id, path) if self._write(work) else None

    def delete_memory_files(self, user_id: str, path: str) -> int:
        def work(tx: Any) -> int:
            files = _rows(
                tx, "memory_file/at_or_under", user_id=user_id, path=path, under=path + "/"
            )
            hashes: list[str] = []
            for file in files:
                for row in _rows(tx, "memory/delete", memory_id=file["memory_id"], user_id=user_id):
                    if row["session_id"]:
                        self._touch(tx, row["session_id"])
                    hashes += row["chunk_hashes"]
            self._collect_garbage(tx, hashes)
            return len(files)

        return self._write(work)

    def rename_memory_files(
        self,
        user_id: str,
        old_path: str,
        new_path: str,
        parents: Sequence[str],
        session_id: str | None,
        updated_at: str,
        keep_versions: int,
    ) -> str:
        def work(tx: Any) -> str:
            moving = _rows(
                tx, "memory_file/at_or_under", user_id=user_id, path=old_path, under=old_path + "/"
            )
            if not moving:
                return "missing"
            conflict = self._file_conflict(tx, user_id, new_path, parents)
            if conflict:
                return "exists" if conflict == "directory" else conflict
            if session_id:
                self._ensure_session(tx, session_id, user_id, updated_at)
            for file in moving:
                moved = new_path + file["path"][len(old_path) :]
                version = file["version"] + 1
                _rows(
                    tx,
                    "memory_file/move",
                    memory_id=file["memory_id"],
                    path=moved,
                    file_key=_file_key(user_id, moved),
                    version=version,
                    updated_at=updated_at,
                    versions=_kept_versions(
                        file["versions"] or [],
                        version,
                        moved,
                        file["content"],
                        session_id,
                        updated_at,
                        keep_versions,
                    ),
                )
            return "renamed"

        return self._write(work)

    def memory_file_versions(self, user_id: str, path: str, limit: int) -> list[Record]:
        rows = self._read("memory_file/get", file_key=_file_key(user_id, path))
        if not rows:
            return []
        versions = sorted(rows[0]["versions"] or [], key=lambda v: v["version"], reverse=True)
        return [{**v, "session_id": v.get("session_id") or None} for v in versions[:limit]]


def _file_key(user_id: str, path: str) -> str:
    """A memory file's unique key: ``|`` never occurs in a user_id."""
    return f"{user_id}|{path}"


def _kept_versions(
    versions: Sequence[Record],
    version: int,
    path: str,
    content: str,
    session_id: str | None,
    created_at: str,
    keep: int,
) -> list[Record]:
    """The versions to keep after writing ``version``: the newest ``keep``.
    A missing session is "" in the stored map (a map value is never null)."""
    new = {
        "version": version,
        "path": path,
        "content": content,
        "session_id": session_id or "",
        "created_at": created_at,
    }
    # The stored versions run one by one up to the version before this one
    # (every write and move adds the next): the newest ``keep`` are the last.
    return [*versions, new][-keep:]
