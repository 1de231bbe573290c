"""Memory files (the Anthropic memory tool): a Memory at a path, unique per
user, with its newest versions kept; reading, listing, creating, writing,
deleting and renaming them. The transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from sessions_graph.engines.base import Record
from sessions_graph.engines.sqlite.rows import (
    _MEMORY_COLUMNS,
    _TOUCH_SESSION,
    _ensure_session,
    _insert_memory,
)

#: A memory file's path is the prefix, or the file is under it (parameters:
#: prefix three times). '/' sorts just before '0', so the range is "prefix/...".
_AT_OR_UNDER = "(f.path = ? OR (f.path > ? || '/' AND f.path < ? || '0'))"


class MemoryFiles:
    """The memory-file operations of ``SQLiteEngine``."""

    def get_memory_file(self, user_id: str, path: str) -> Record | None:
        rows = self._read(
            f"SELECT {', '.join('m.' + c for c in _MEMORY_COLUMNS.split(', '))}, f.path, f.version"
            " FROM memory_files f JOIN memories m ON m.memory_id = f.memory_id"
            " WHERE f.user_id = ? AND f.path = ?",
            (user_id, path),
        )
        return dict(rows[0]) if rows else None

    def list_memory_files(self, user_id: str, prefix: str) -> list[Record]:
        rows = self._read(
            "SELECT f.path, f.memory_id, length(m.content) AS size, m.updated_at, f.version"
            " FROM memory_files f JOIN memories m ON m.memory_id = f.memory_id"
            f" WHERE f.user_id = ? AND {_AT_OR_UNDER} ORDER BY f.path",
            (user_id, prefix, prefix, prefix),
        )
        return [dict(r) for r in rows]

    @staticmethod
    def _file_conflict(
        conn: sqlite3.Connection, user_id: str, path: str, parents: Sequence[str]
    ) -> str | None:
        """Why no file may be put at ``path`` now, or None."""
        if conn.execute(
            "SELECT 1 FROM memory_files WHERE user_id = ? AND path = ?", (user_id, path)
        ).fetchone():
            return "exists"
        if conn.execute(
            f"SELECT 1 FROM memory_files f WHERE f.user_id = ? AND {_AT_OR_UNDER} LIMIT 1",
            (user_id, path, path, path),
        ).fetchone():
            return "directory"
        if (
            parents
            and conn.execute(
                "SELECT 1 FROM memory_files WHERE user_id = ?"
                " AND path IN (SELECT value FROM json_each(?))",
                (user_id, json.dumps(list(parents))),
            ).fetchone()
        ):
            return "parent"
        return None

    @staticmethod
    def _keep_version(
        conn: sqlite3.Connection, row: Record, version: int, session_id: str | None, keep: int
    ) -> None:
        conn.execute(
            "INSERT INTO memory_file_versions(memory_id, version, path, content, session_id,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (row["memory_id"], version, row["path"], row["content"], session_id, row["updated_at"]),
        )
        conn.execute(
            "DELETE FROM memory_file_versions WHERE memory_id = ? AND version <= ?",
            (row["memory_id"], version - keep),
        )

    def create_memory_file(
        self, memory: Record, path: str, parents: Sequence[str], keep_versions: int
    ) -> str:
        with self._write() as conn:
            conflict = self._file_conflict(conn, memory["user_id"], path, parents)
            if conflict:
                return conflict
            _insert_memory(conn, memory)
            conn.execute(
                "INSERT INTO memory_files(memory_id, user_id, path, version) VALUES (?, ?, ?, 1)",
                (memory["memory_id"], memory["user_id"], path),
            )
            self._keep_version(
                conn, {**memory, "path": path}, 1, memory["session_id"], keep_versions
            )
            return "created"

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
        with self._write() as conn:
            row = conn.execute(
                "UPDATE memory_files SET version = version + 1"
                " WHERE user_id = ? AND path = ? AND version = ? RETURNING memory_id, version",
                (user_id, path, expected_version),
            ).fetchone()
            if row is None:
                return None
            memory_id, version = row
            if session_id:
                _ensure_session(conn, session_id, user_id, updated_at)
            owner_session = conn.execute(
                "UPDATE memories SET content = ?, updated_at = ? WHERE memory_id = ?"
                " RETURNING session_id",
                (content, updated_at, memory_id),
            ).fetchone()[0]
            if owner_session:
                conn.execute(_TOUCH_SESSION, (owner_session,))
            written = {"memory_id": memory_id, "path": path, "content": content}
            self._keep_version(
                conn, {**written, "updated_at": updated_at}, version, session_id, keep_versions
            )
        return self.get_memory_file(user_id, path)

    def delete_memory_files(self, user_id: str, path: str) -> int:
        with self._write() as conn:
            rows = conn.execute(
                f"SELECT f.memory_id FROM memory_files f WHERE f.user_id = ? AND {_AT_OR_UNDER}",
                (user_id, path, path, path),
            ).fetchall()
            ids = [r[0] for r in rows]
            for memory_id in ids:
                session = conn.execute(
                    "DELETE FROM memories WHERE memory_id = ? RETURNING session_id", (memory_id,)
                ).fetchone()[0]
                if session:
                    conn.execute(_TOUCH_SESSION, (session,))
            return len(ids)

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
        with self._write() as conn:
            moving = conn.execute(
                "SELECT f.memory_id, f.path, f.version, m.content FROM memory_files f"
                " JOIN memories m ON m.memory_id = f.memory_id"
                f" WHERE f.user_id = ? AND {_AT_OR_UNDER}",
                (user_id, old_path, old_path, old_path),
            ).fetchall()
            if not moving:
                return "missing"
            conflict = self._file_conflict(conn, user_id, new_path, parents)
            if conflict:
                return "exists" if conflict == "directory" else conflict
            if session_id:
                _ensure_session(conn, session_id, user_id, updated_at)
            for memory_id, path, version, content in moving:
                moved = new_path + path[len(old_path) :]
                conn.execute(
                    "UPDATE memory_files SET path = ?, version = ? WHERE memory_id = ?",
                    (moved, version + 1, memory_id),
                )
                conn.execute(
                    "UPDATE memories SET updated_at = ? WHERE memory_id = ?",
                    (updated_at, memory_id),
                )
                row = {
                    "memory_id": memory_id,
                    "path": moved,
                    "content": content,
                    "updated_at": updated_at,
                }
                self._keep_version(conn, row, version + 1, session_id, keep_versions)
            return "renamed"

    def memory_file_versions(self, user_id: str, path: str, limit: int) -> list[Record]:
        rows = self._read(
            "SELECT v.version, v.path, v.content, v.session_id, v.created_at"
            " FROM memory_files f JOIN memory_file_versions v ON v.memory_id = f.memory_id"
            " WHERE f.user_id = ? AND f.path = ? ORDER BY v.version DESC LIMIT ?",
            (user_id, path, limit),
        )
        return [dict(r) for r in rows]
