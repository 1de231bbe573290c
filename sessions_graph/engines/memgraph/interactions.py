"""Interactions on the Memgraph engine: ``(:Interaction)`` nodes, the
short-term cache of a session's exchanges (the context items kept as one
JSON string), and ``(:FeedbackWeight {user_id, element_key, weight})``
nodes, the per-user weights their ratings teach, which outlive them. Each
carries its ``user_id``, and every statement is bound to it. The mixin
reaches the plumbing (``_read``, ``_write``) through ``self``; the plumbing
comes from ``engine.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sessions_graph.engines.base import Record
from sessions_graph.engines.memgraph.rows import _count, _rows


def _record(row: Record) -> Record:
    row["context"] = json.loads(row["context"]) if row.get("context") else []
    return row


class Interactions:
    """Interactions and feedback weights."""

    def save_interaction(self, interaction: Record) -> None:
        params = {
            **interaction,
            "context": json.dumps(interaction["context"]),
            "items": len(interaction["context"]),
        }
        self._write(lambda tx: _rows(tx, "interaction/save", **params))  # type: ignore[attr-defined]

    def get_interaction(self, interaction_id: str, user_id: str, now: str) -> Record | None:
        rows = self._read(  # type: ignore[attr-defined]
            "interaction/get", interaction_id=interaction_id, user_id=user_id, now=now
        )
        return _record(rows[0]) if rows else None

    def list_interactions(
        self, user_id: str, session_id: str | None, now: str, limit: int, unanswered: bool = False
    ) -> list[Record]:
        rows = self._read(  # type: ignore[attr-defined]
            "interaction/list",
            user_id=user_id,
            session_id=session_id,
            now=now,
            limit=limit,
            unanswered=unanswered,
        )
        return [_record(r) for r in rows]

    def answer_interaction(
        self, interaction_id: str, user_id: str, answer: str, answered_at: str, context: Any
    ) -> bool:
        params = {
            "interaction_id": interaction_id,
            "user_id": user_id,
            "answer": answer,
            "now": answered_at,
            "context": json.dumps(context),
            "items": len(context),
            "used": sum(bool(item.get("used")) for item in context),
        }
        rows = self._write(lambda tx: _rows(tx, "interaction/answer", **params))  # type: ignore[attr-defined]
        return _count(rows, "changed") > 0

    def rate_interaction(
        self,
        interaction_id: str,
        user_id: str,
        score: int,
        keys: Sequence[str],
        alpha: float,
        now: str,
    ) -> bool:
        def work(tx: Any) -> bool:
            rows = _rows(
                tx,
                "interaction/rate",
                interaction_id=interaction_id,
                user_id=user_id,
                score=score,
                now=now,
            )
            if not _count(rows, "changed"):
                return False
            _step(tx, user_id, keys, (score - 1) / 4, alpha, now)
            return True

        return self._write(work)  # type: ignore[attr-defined]

    def nudge_weights(
        self, user_id: str, keys: Sequence[str], target: float, alpha: float, now: str
    ) -> None:
        self._write(lambda tx: _step(tx, user_id, keys, target, alpha, now))  # type: ignore[attr-defined]

    def feedback_weights(self, user_id: str, keys: Sequence[str]) -> dict[str, float]:
        if not keys:
            return {}
        rows = self._read(  # type: ignore[attr-defined]
            "interaction/weights", user_id=user_id, keys=list(dict.fromkeys(keys))
        )
        return {r["element_key"]: r["weight"] for r in rows}

    def expire_interactions(self, now: str) -> int:
        rows = self._write(lambda tx: _rows(tx, "interaction/expire", now=now))  # type: ignore[attr-defined]
        return _count(rows, "deleted")

    def interaction_usage(self, user_id: str, now: str, limit: int) -> list[Record]:
        return self._read("interaction/usage", user_id=user_id, now=now, limit=limit)  # type: ignore[attr-defined]

    # -- forgetting (called by forget.py inside its transaction) -------------
    def _forget_session_interactions(self, tx: Any, session_id: str) -> None:
        """The session's interactions and its owner's weights of its own turns
        and memories (before those nodes go)."""
        _rows(tx, "interaction/forget_session_weights", session_id=session_id)
        _rows(tx, "interaction/forget_session", session_id=session_id)

    def _forget_user_interactions(self, tx: Any, user_id: str) -> None:
        _rows(tx, "interaction/forget_user", user_id=user_id)
        _rows(tx, "interaction/forget_user_weights", user_id=user_id)


def _step(
    tx: Any, user_id: str, keys: Sequence[str], target: float, alpha: float, now: str
) -> None:
    # Each element once: an interaction that gave one twice rates it once.
    _rows(
        tx,
        "interaction/step_weights",
        user_id=user_id,
        keys=list(dict.fromkeys(keys)),
        target=float(target),
        alpha=float(alpha),
        now=now,
    )
