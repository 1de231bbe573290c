"""Memories: saving, reading, listing, searching (full text, or substrings
where the tokenizer cannot answer), updating and deleting them. The
transactions (``self._write()`` / ``self._read()``) come from engine.py."""

from __future__ import annotations

from sessions_graph.engines.base import Record
from sessions_graph.engines.sqlite.rows import _MEMORY_COLUMNS, _TOUCH_SESSION, _insert_memory
from sessions_graph.query import (
    Node,
    local_score,
    matches,
    needs_local,
    substrings,
    to_fts5,
    tokenize,
)


class Memories:
    """The Memory operations of ``SQLiteEngine``."""

    def save_memory(self, memory: Record) -> None:
        with self._write() as conn:
            _insert_memory(conn, memory)

    def get_memory(self, memory_id: str, user_id: str | None = None) -> Record | None:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id = ?"
            " AND (? IS NULL OR user_id = ?)",
            (memory_id, user_id, user_id),
        )
        return dict(rows[0]) if rows else None

    def list_memories(self, user_id: str, limit: int) -> list[Record]:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE user_id = ?"
            " ORDER BY created_at DESC, memory_id DESC LIMIT ?",
            (user_id, limit),
        )
        return [dict(r) for r in rows]

    def list_session_memories(self, session_id: str, limit: int) -> list[Record]:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE session_id = ?"
            " ORDER BY created_at DESC, memory_id DESC LIMIT ?",
            (session_id, limit),
        )
        return [dict(r) for r in rows]

    def search_memories(self, user_id: str, query: Node, limit: int) -> list[Record]:
        if needs_local(query):
            return self._search_substrings(user_id, query, limit)
        # ORDER BY rank alone (FTS5's bm25, lower is better) lets FTS5 hand
        # rows over already ranked and stop at the limit; any second sort key
        # makes SQLite sort every match itself, a third slower at 100k
        # memories. Ties within the page are ordered newest first afterwards.
        rows = self._read(
            f"SELECT {', '.join('m.' + c for c in _MEMORY_COLUMNS.split(', '))},"
            " -memories_fts.rank AS score"
            " FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid"
            " WHERE memories_fts MATCH ? AND m.user_id = ?"
            " ORDER BY memories_fts.rank LIMIT ?",
            (to_fts5(query), user_id, limit),
        )
        records = [dict(r) for r in rows]
        records.sort(key=lambda r: (r["score"], r["created_at"], r["memory_id"]), reverse=True)
        return records

    def _search_substrings(self, user_id: str, query: Node, limit: int) -> list[Record]:
        """A query unicode61 cannot answer (CJK is indexed as whole runs):
        the user's memories holding one of its pieces (``instr``, no LIKE
        wildcards to escape), then the exact token rules in Python."""
        pieces = substrings(query)
        if not pieces:
            return []
        found = " OR ".join(["instr(lower(content), ?) > 0"] * len(pieces))
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE user_id = ? AND ({found})",
            (user_id, *pieces),
        )
        hits = []
        for row in rows:
            tokens = tokenize(row["content"])
            if matches(query, tokens):
                hits.append({**dict(row), "score": local_score(query, tokens)})
        hits.sort(key=lambda r: (r["score"], r["created_at"], r["memory_id"]), reverse=True)
        return hits[:limit]

    def update_memory(
        self, memory_id: str, content: str, updated_at: str, user_id: str | None = None
    ) -> Record | None:
        with self._write() as conn:
            row = conn.execute(
                f"UPDATE memories SET content = ?, updated_at = ? WHERE memory_id = ?"
                f" AND (? IS NULL OR user_id = ?) RETURNING {_MEMORY_COLUMNS}",
                (content, updated_at, memory_id, user_id, user_id),
            ).fetchone()
            if row is None:
                return None
            record = dict(row)
            if record["session_id"]:
                conn.execute(_TOUCH_SESSION, (record["session_id"],))
            return record

    def delete_memory(self, memory_id: str, user_id: str | None = None) -> bool:
        with self._write() as conn:
            row = conn.execute(
                "DELETE FROM memories WHERE memory_id = ? AND (? IS NULL OR user_id = ?)"
                " RETURNING session_id",
                (memory_id, user_id, user_id),
            ).fetchone()
            if row is None:
                return False
            if row[0]:
                conn.execute(_TOUCH_SESSION, (row[0],))
            return True
