"""Interactions on the embedded engine: the short-term cache of a session's
exchanges (``interactions``, its context kept as JSON) and the per-user
feedback weights their ratings teach (``feedback_weights``). The
transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from sessions_graph.engines.base import Record

#: Keys per ``IN (...)`` list: well under SQLite's limit on parameters.
_KEYS_PER_QUERY = 500

_COLUMNS = (
    "interaction_id, user_id, session_id, source, created_at, expires_at, question, context,"
    " answer, answered_at, feedback, seq_from"
)
#: A live interaction: not expired at ``:now``.
_LIVE = "(expires_at IS NULL OR expires_at > :now)"
#: One EMA step of a weight towards ``:target`` (a weight not stored yet
#: starts at 0.5); SQLite's two-argument max / min clip it to [0, 1].
_STEP = """
    INSERT INTO feedback_weights(user_id, element_key, weight, ratings, updated_at)
    VALUES (:user_id, :key, max(0.0, min(1.0, 0.5 + :alpha * (:target - 0.5))), 1, :now)
    ON CONFLICT (user_id, element_key) DO UPDATE SET
        weight = max(0.0, min(1.0, weight + :alpha * (:target - weight))),
        ratings = ratings + 1,
        updated_at = :now
"""


def _record(row: sqlite3.Row) -> Record:
    record = dict(row)
    record["context"] = json.loads(record["context"])
    return record


class Interactions:
    """The interaction and feedback operations of ``SQLiteEngine``."""

    def save_interaction(self, interaction: Record) -> None:
        row = {**interaction, "context": json.dumps(interaction["context"])}
        with self._write() as conn:  # type: ignore[attr-defined]
            conn.execute(
                f"INSERT INTO interactions({_COLUMNS}, items)"
                " VALUES (:interaction_id, :user_id, :session_id, :source, :created_at,"
                " :expires_at, :question, :context, :answer, NULL, :feedback, :seq_from, :items)",
                {**row, "items": len(interaction["context"])},
            )

    def get_interaction(self, interaction_id: str, user_id: str, now: str) -> Record | None:
        rows = self._read(  # type: ignore[attr-defined]
            f"SELECT {_COLUMNS} FROM interactions WHERE interaction_id = :id"
            f" AND user_id = :user_id AND {_LIVE}",
            {"id": interaction_id, "user_id": user_id, "now": now},
        )
        return _record(rows[0]) if rows else None

    def list_interactions(
        self, user_id: str, session_id: str | None, now: str, limit: int, unanswered: bool = False
    ) -> list[Record]:
        rows = self._read(  # type: ignore[attr-defined]
            f"SELECT {_COLUMNS} FROM interactions WHERE user_id = :user_id"
            f" AND (:session_id IS NULL OR session_id = :session_id) AND {_LIVE}"
            " AND (:unanswered = 0 OR answer IS NULL)"
            " ORDER BY created_at DESC, interaction_id DESC LIMIT :limit",
            {
                "user_id": user_id,
                "session_id": session_id,
                "now": now,
                "limit": limit,
                "unanswered": int(unanswered),
            },
        )
        return [_record(r) for r in rows]

    def answer_interaction(
        self, interaction_id: str, user_id: str, answer: str, answered_at: str, context: Any
    ) -> bool:
        with self._write() as conn:  # type: ignore[attr-defined]
            changed = conn.execute(
                "UPDATE interactions SET answer = :answer, answered_at = :answered_at,"
                " context = :context, items = :items, used = :used"
                f" WHERE interaction_id = :id AND user_id = :user_id AND {_LIVE}",
                {
                    "answer": answer,
                    "answered_at": answered_at,
                    "context": json.dumps(context),
                    "items": len(context),
                    "used": sum(bool(item.get("used")) for item in context),
                    "id": interaction_id,
                    "user_id": user_id,
                    "now": answered_at,
                },
            ).rowcount
        return changed > 0

    def rate_interaction(
        self,
        interaction_id: str,
        user_id: str,
        score: int,
        keys: Sequence[str],
        alpha: float,
        now: str,
    ) -> bool:
        with self._write() as conn:  # type: ignore[attr-defined]
            changed = conn.execute(
                "UPDATE interactions SET feedback = :score, rated_at = :now"
                f" WHERE interaction_id = :id AND user_id = :user_id AND {_LIVE}",
                {"score": score, "now": now, "id": interaction_id, "user_id": user_id},
            ).rowcount
            if changed:
                self._step(conn, user_id, keys, (score - 1) / 4, alpha, now)
        return changed > 0

    def nudge_weights(
        self, user_id: str, keys: Sequence[str], target: float, alpha: float, now: str
    ) -> None:
        with self._write() as conn:  # type: ignore[attr-defined]
            self._step(conn, user_id, keys, target, alpha, now)

    def _step(
        self,
        conn: sqlite3.Connection,
        user_id: str,
        keys: Sequence[str],
        target: float,
        alpha: float,
        now: str,
    ) -> None:
        params = {"user_id": user_id, "alpha": alpha, "target": target, "now": now}
        # Each element once: an interaction that gave one twice rates it once.
        conn.executemany(_STEP, [{**params, "key": key} for key in dict.fromkeys(keys)])

    def feedback_weights(self, user_id: str, keys: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _KEYS_PER_QUERY):
            part = unique[start : start + _KEYS_PER_QUERY]
            marks = ", ".join("?" * len(part))
            for key, weight in self._read(  # type: ignore[attr-defined]
                "SELECT element_key, weight FROM feedback_weights"
                f" WHERE user_id = ? AND element_key IN ({marks})",
                (user_id, *part),
            ):
                found[key] = weight
        return found

    def expire_interactions(self, now: str) -> int:
        with self._write() as conn:  # type: ignore[attr-defined]
            return conn.execute(
                "DELETE FROM interactions WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now,),
            ).rowcount

    def interaction_usage(self, user_id: str, now: str, limit: int) -> list[Record]:
        rows = self._read(  # type: ignore[attr-defined]
            "SELECT session_id, count(*) AS interactions, count(answer) AS answered,"
            " count(feedback) AS rated,"
            " coalesce(sum(CASE WHEN answer IS NOT NULL THEN items END), 0) AS items,"
            " coalesce(sum(CASE WHEN answer IS NOT NULL THEN used END), 0) AS used,"
            " max(created_at) AS last_at"
            f" FROM interactions WHERE user_id = :user_id AND {_LIVE}"
            " GROUP BY session_id ORDER BY last_at DESC, session_id DESC LIMIT :limit",
            {"user_id": user_id, "now": now, "limit": limit},
        )
        return [{k: r[k] for k in r.keys() if k != "last_at"} for r in rows]  # noqa: SIM118

    # -- forgetting (called by forget.py inside its transaction) -------------
    def _forget_session_interactions(self, conn: sqlite3.Connection, session_id: str) -> None:
        """The session's interactions, and the weights of its own turns and
        memories (before those rows go)."""
        conn.execute("DELETE FROM interactions WHERE session_id = ?", (session_id,))
        conn.execute(
            "DELETE FROM feedback_weights WHERE user_id = (SELECT user_id FROM sessions"
            " WHERE session_id = :sid) AND element_key IN ("
            " SELECT 'turn:' || action_id FROM actions WHERE session_id = :sid"
            " UNION ALL SELECT 'memory:' || memory_id FROM memories WHERE session_id = :sid)",
            {"sid": session_id},
        )

    def _forget_user_interactions(self, conn: sqlite3.Connection, user_id: str) -> None:
        conn.execute("DELETE FROM interactions WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM feedback_weights WHERE user_id = ?", (user_id,))
