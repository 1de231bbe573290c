"""Forgetting: deleting a session or a user with everything only they
reference, and counting what went. The transaction comes from engine.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from sessions_graph.engines.base import Record


class Forget:
    """The forgetting operations of ``SQLiteEngine``."""

    def _graph_counts(self, conn: sqlite3.Connection) -> dict[str, int]:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("sessions", "actions", "memories", "chunks", "entities", "injections")
        }

    def _forget_sessions(self, conn: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        # The delete triggers drop the units' chunk links, and the collection
        # triggers then take every chunk and entity nothing else references.
        for sid in session_ids:
            self._forget_session_interactions(conn, sid)  # type: ignore[attr-defined]
            conn.execute("DELETE FROM actions WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM injections WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM memories WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM sessions WHERE session_id = ?", (sid,))

    def forget_session(self, session_id: str) -> Record:
        with self._write() as conn:
            before = self._graph_counts(conn)
            self._forget_sessions(conn, [session_id])
            after = self._graph_counts(conn)
        return {k: before[k] - after[k] for k in before}

    def forget_user(self, user_id: str) -> Record:
        with self._write() as conn:
            before = self._graph_counts(conn)
            sessions = conn.execute(
                "SELECT session_id FROM sessions WHERE user_id = ?", (user_id,)
            ).fetchall()
            self._forget_sessions(conn, [r[0] for r in sessions])
            conn.execute("DELETE FROM memories WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM injections WHERE user_id = ?", (user_id,))
            self._forget_user_interactions(conn, user_id)  # type: ignore[attr-defined]
            users = conn.execute("DELETE FROM users WHERE user_id = ?", (user_id,)).rowcount
            after = self._graph_counts(conn)
        return {**{k: before[k] - after[k] for k in before}, "users": users}
