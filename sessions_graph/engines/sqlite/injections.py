"""The injection ledger on the embedded engine: one row per injection, its
item ids a JSON array, read per (user, session) on an index. The
transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3

from sessions_graph.engines.base import Record

_COLUMNS = "injection_id, user_id, session_id, event, injected_at, item_ids, tokens"


def _record(row: sqlite3.Row) -> Record:
    record = dict(row)
    record["item_ids"] = json.loads(record["item_ids"])
    return record


class Injections:
    """The injection ledger operations of ``SQLiteEngine``."""

    def record_injection(self, injection: Record) -> None:
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO injections({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    injection["injection_id"],
                    injection["user_id"],
                    injection["session_id"],
                    injection["event"],
                    injection["injected_at"],
                    json.dumps(list(injection["item_ids"])),
                    injection["tokens"],
                ),
            )

    def injected_items(self, user_id: str, session_id: str) -> set[str]:
        rows = self._read(
            "SELECT item_ids FROM injections WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
        return {item for (items,) in rows for item in json.loads(items)}

    def list_injections(self, user_id: str, session_id: str | None, limit: int) -> list[Record]:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM injections WHERE user_id = :user"
            " AND (:session IS NULL OR session_id = :session)"
            " ORDER BY injected_at DESC, injection_id DESC LIMIT :limit",
            {"user": user_id, "session": session_id, "limit": limit},
        )
        return [_record(r) for r in rows]

    def injection_totals(self, user_id: str, since: str) -> Record:
        since_rows = self._read(
            "SELECT coalesce(sum(tokens), 0) FROM injections"
            " WHERE user_id = ? AND injected_at >= ?",
            (user_id, since),
        )
        per_session = self._read(
            "SELECT sum(tokens) FROM injections WHERE user_id = ? GROUP BY session_id",
            (user_id,),
        )
        return {"tokens_since": since_rows[0][0], "session_tokens": [r[0] for r in per_session]}
