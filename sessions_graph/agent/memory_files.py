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

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessions_graph.clock import utcnow
from sessions_graph.errors import MemoryValidationError, StoreError
from sessions_graph.validation import (
    MAX_CONTENT_BYTES,
    check_content,
    check_id,
    check_limit,
    check_optional_id,
)

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph

#: The one directory the memory tool works in.
ROOT = "/memories"
#: Versions kept per file (the newest); older ones are deleted as new come.
KEEP_VERSIONS = 20
#: Longest path accepted, in characters.
MAX_PATH_CHARS = 1024
#: How often a read-modify-write is retried when another writer got between.
_WRITE_ATTEMPTS = 5

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class MemoryFileError(MemoryValidationError):
    """A memory-file command cannot be done (no such file, the path is taken,
    a path outside /memories); nothing was written. Its message is written
    for the model that sent the command."""


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


def normalize_path(path: object) -> str:
    """``path`` as stored: ``/memories`` or ``/memories/a/b``, no trailing
    slash. Refuses anything outside ``/memories``, ``.`` / ``..`` segments,
    empty segments, backslashes and control characters."""
    if not isinstance(path, str) or not path:
        raise MemoryFileError("a path is required, e.g. /memories/notes.md")
    if len(path) > MAX_PATH_CHARS:
        raise MemoryFileError(f"the path is longer than {MAX_PATH_CHARS} characters")
    if _CONTROL.search(path) or "\\" in path:
        raise MemoryFileError(f"the path {path!r} holds control characters or backslashes")
    trimmed = path.rstrip("/") or "/"
    if trimmed != ROOT and not trimmed.startswith(ROOT + "/"):
        raise MemoryFileError(f"the path {path} is outside {ROOT}: every path starts with {ROOT}/")
    segments = trimmed[len(ROOT) + 1 :].split("/") if trimmed != ROOT else []
    if any(s in ("", ".", "..") for s in segments):
        raise MemoryFileError(
            f"the path {path} has an empty, '.' or '..' segment: use plain names under {ROOT}"
        )
    return trimmed


def parents(path: str) -> list[str]:
    """The directories above ``path`` inside ``/memories`` (not ``/memories`` itself)."""
    segments = path[len(ROOT) + 1 :].split("/")
    return [ROOT + "/" + "/".join(segments[:i]) for i in range(1, len(segments))]


def check_file_text(text: object, path: str) -> str:
    """File text as a Memory's content: not empty, at most ``MAX_CONTENT_BYTES``."""
    if not isinstance(text, str):
        raise MemoryFileError("the file text must be a string")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise MemoryFileError(
            f"{path} would be {size} bytes; a memory file holds at most {MAX_CONTENT_BYTES}"
            " bytes: split it into several files"
        )
    try:
        return check_content(text)
    except MemoryValidationError as exc:
        raise MemoryFileError(f"{path}: {exc}") from None


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
            raise MemoryFileError(self._missing(path))
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
            raise MemoryFileError(self._missing(path))
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
            raise MemoryFileError(self._conflict(outcome, path))
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
            raise MemoryFileError(self._missing(path))
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
            raise MemoryFileError(self._missing(old))
        if outcome != "renamed":
            raise MemoryFileError(self._conflict(outcome, new))

    # -- messages ---------------------------------------------------------------------
    @staticmethod
    def _missing(path: str) -> str:
        return f"The path {path} does not exist. View {ROOT} to see the files there."

    @staticmethod
    def _conflict(outcome: str, path: str) -> str:
        if outcome == "exists":
            return f"{path} already exists: view it, or choose another path"
        if outcome == "directory":
            return f"{path} is a directory (files are under it): choose another path"
        return f"a parent of {path} is a file: a file cannot hold other files"


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
