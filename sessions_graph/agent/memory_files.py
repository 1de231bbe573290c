"""Memory Files: a User's files under ``/memories``, each one Memory.

The Anthropic memory tool lets a model keep notes as files (view, create,
str_replace, insert, delete, rename under ``/memories``). Here each file is a
Memory of the user (its content is the file's text, ``session_id`` the session
that created it), so it is searched and recalled like any other Memory, and
it keeps its newest versions (``KEEP_VERSIONS``), each with the session that
wrote it. Directories are not stored: a directory is the common prefix of
the files under it, as object stores do it.

This module holds the rules (which paths exist, what an edit means, what is
too large) and calls the engine's narrow memory-file operations, which make
each write atomic. It imports no SDK: ``memory_tool`` adapts it to the
Anthropic SDK's tool class.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessions_graph.clock import utcnow
from sessions_graph.errors import MemoryFileError, StoreError
from sessions_graph.memory_paths import (
    KEEP_VERSIONS,
    ROOT,
    check_file_text,
    conflict_message,
    missing_message,
    normalize_path,
    parents,
)
from sessions_graph.validation import (
    check_id,
    check_limit,
    check_optional_id,
)

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph

__all__ = [
    "KEEP_VERSIONS",
    "ROOT",
    "MemoryFile",
    "MemoryFileError",
    "MemoryFileVersion",
    "MemoryFiles",
    "check_file_text",
    "normalize_path",
    "parents",
]

#: How often a read-modify-write is retried when another writer got between.
_WRITE_ATTEMPTS = 5


@dataclass(frozen=True)
class MemoryFile:
    """One file: its path, text, version and the Memory that holds it."""

    path: str
    content: str
    version: int
    memory_id: str
    session_id: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class MemoryFileVersion:
    """One kept version of a file: what a write left there, and who wrote it."""

    version: int
    path: str
    content: str
    session_id: str | None
    created_at: str


class MemoryFiles:
    """One user's memory files, written by ``session_id`` (when given)."""

    def __init__(self, graph: SessionsGraph, user_id: str, session_id: str | None = None) -> None:
        self.graph = graph
        self.user_id = check_id(user_id, "user_id")
        self.session_id = check_optional_id(session_id, "session_id")

    @property
    def _engine(self) -> Any:
        return self.graph.engine

    # -- reads ------------------------------------------------------------------
    def get(self, path: str) -> MemoryFile | None:
        """The file at ``path``, or None."""
        row = self._engine.get_memory_file(self.user_id, normalize_path(path))
        return _file(row) if row else None

    def read(self, path: str) -> MemoryFile:
        """The file at ``path``; ``MemoryFileError`` if there is none."""
        path = normalize_path(path)
        found = self.get(path)
        if found is None:
            raise MemoryFileError(missing_message(path))
        return found

    def listing(self, path: str = ROOT) -> list[dict[str, Any]]:
        """Files at or under ``path``, by path: ``path``, ``size`` (characters),
        ``updated_at``, ``version``."""
        return list(self._engine.list_memory_files(self.user_id, normalize_path(path)))

    def versions(self, path: str, limit: int = KEEP_VERSIONS) -> list[MemoryFileVersion]:
        """The kept versions of the file at ``path``, newest first."""
        path = normalize_path(path)
        rows = self._engine.memory_file_versions(self.user_id, path, check_limit(limit))
        if not rows and self.get(path) is None:
            raise MemoryFileError(missing_message(path))
        return [MemoryFileVersion(**r) for r in rows]

    # -- writes -----------------------------------------------------------------
    def create(self, path: str, text: str) -> MemoryFile:
        """A new file; ``MemoryFileError`` if the path is taken."""
        path = normalize_path(path)
        if path == ROOT:
            raise MemoryFileError(f"{ROOT} is the memory directory, not a file")
        text = check_file_text(text, path)
        now = utcnow()
        memory = {
            "memory_id": str(uuid.uuid4()),
            "user_id": self.user_id,
            "content": text,
            "session_id": self.session_id,
            "created_at": now,
            "updated_at": now,
        }
        outcome = self._engine.create_memory_file(memory, path, parents(path), KEEP_VERSIONS)
        if outcome != "created":
            raise MemoryFileError(conflict_message(outcome, path))
        return MemoryFile(path, text, 1, memory["memory_id"], self.session_id, now, now)

    def edit(self, path: str, change: Any) -> tuple[MemoryFile, Any]:
        """Apply ``change(text) -> (new_text, detail)`` to the file and write it
        atomically; if another writer got in between, read and apply again.
        Returns the written file and ``detail``."""
        path = normalize_path(path)
        for _ in range(_WRITE_ATTEMPTS):
            current = self.read(path)
            text, detail = change(current.content)
            text = check_file_text(text, path)
            row = self._engine.write_memory_file(
                self.user_id, path, text, self.session_id, utcnow(), current.version, KEEP_VERSIONS
            )
            if row is not None:
                return _file(row), detail
        raise StoreError(f"{path} kept changing while it was edited; try again")

    def delete(self, path: str) -> int:
        """Delete the file at ``path``, or every file under the directory
        ``path``; returns how many. ``MemoryFileError`` if there is nothing."""
        path = normalize_path(path)
        if path == ROOT:
            raise MemoryFileError(f"{ROOT} itself cannot be deleted; delete the files in it")
        deleted = self._engine.delete_memory_files(self.user_id, path)
        if not deleted:
            raise MemoryFileError(missing_message(path))
        return deleted

    def delete_all(self) -> int:
        """Delete every memory file of the user; returns how many."""
        return int(self._engine.delete_memory_files(self.user_id, ROOT))

    def rename(self, old_path: str, new_path: str) -> None:
        """Move a file, or a directory with every file under it."""
        old, new = normalize_path(old_path), normalize_path(new_path)
        if ROOT in (old, new):
            raise MemoryFileError(f"{ROOT} itself cannot be renamed, nor be a destination")
        if new == old or new.startswith(old + "/"):
            raise MemoryFileError(f"cannot move {old} onto or into itself")
        outcome = self._engine.rename_memory_files(
            self.user_id, old, new, parents(new), self.session_id, utcnow(), KEEP_VERSIONS
        )
        if outcome == "missing":
            raise MemoryFileError(missing_message(old))
        if outcome != "renamed":
            raise MemoryFileError(conflict_message(outcome, new))


def _file(row: dict[str, Any]) -> MemoryFile:
    return MemoryFile(
        path=row["path"],
        content=row["content"],
        version=row["version"],
        memory_id=row["memory_id"],
        session_id=row.get("session_id"),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
