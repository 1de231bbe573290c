"""Session digests on the embedded engine: one row per session in
``session_digests``, its body as JSON, deleted with the session (a foreign
key that cascades). The transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from sessions_graph.engines.base import Record

_COLUMNS = "session_id, user_id, source, substance, body, action_count, input_hash, built_at"


def _digest_record(row: sqlite3.Row) -> Record:
    record = dict(row)
    record["substance"] = bool(record["substance"])
    record["body"] = json.loads(record["body"])
    return record


class Digests:
    """The digest operations of ``SQLiteEngine``."""

    def save_digest(self, digest: Record) -> bool:
        with self._write() as conn:
            owner = conn.execute(
                "SELECT user_id FROM sessions WHERE session_id = ?", (digest["session_id"],)
            ).fetchone()
            if owner is None or owner[0] != digest["user_id"]:
                return False
            cursor = conn.execute(
                f"INSERT INTO session_digests({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(session_id) DO UPDATE SET source = excluded.source,"
                " substance = excluded.substance, body = excluded.body,"
                " action_count = excluded.action_count, input_hash = excluded.input_hash,"
                " built_at = excluded.built_at"
                " WHERE NOT (session_digests.source = 'llm' AND excluded.source = 'offline'"
                "   AND session_digests.action_count = excluded.action_count)",
                (
                    digest["session_id"],
                    digest["user_id"],
                    digest["source"],
                    int(bool(digest["substance"])),
                    json.dumps(digest["body"], ensure_ascii=False),
                    digest["action_count"],
                    digest.get("input_hash"),
                    digest["built_at"],
                ),
            )
            return cursor.rowcount > 0

    def get_digest(self, session_id: str) -> Record | None:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM session_digests WHERE session_id = ?", (session_id,)
        )
        return _digest_record(rows[0]) if rows else None

    def session_digests(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM session_digests WHERE user_id = ?"
            " AND session_id IN (SELECT value FROM json_each(?))",
            (user_id, json.dumps(list(session_ids))),
        )
        return [_digest_record(r) for r in rows]
