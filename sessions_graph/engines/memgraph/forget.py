"""Forgetting on the Memgraph engine: a session, or everything of a user,
with the chunks and entities nothing else holds any more. The mixin reaches
the plumbing (``_write``) and reconciliation's ``_collect_garbage`` through
``self``; the plumbing comes from ``engine.py``."""

from __future__ import annotations

from typing import Any

from sessions_graph.engines.base import Record
from sessions_graph.engines.memgraph.rows import _count, _rows


class Forget:
    """Forget a session or a user."""

    def _forget_session(self, tx: Any, session_id: str) -> dict[str, int]:
        self._forget_session_interactions(tx, session_id)  # type: ignore[attr-defined]
        actions = _rows(tx, "forget/session_actions", session_id=session_id)
        memories = _rows(tx, "forget/session_memories", session_id=session_id)
        injections = _count(
            _rows(tx, "forget/session_injections", session_id=session_id), "deleted"
        )
        sessions = _count(_rows(tx, "forget/session", session_id=session_id), "deleted")
        hashes = [h for r in actions + memories for h in r["chunk_hashes"]]
        chunks, entities = self._collect_garbage(tx, hashes)
        return {
            "sessions": sessions,
            "actions": len(actions),
            "memories": len(memories),
            "chunks": chunks,
            "entities": entities,
            "injections": injections,
        }

    def forget_session(self, session_id: str) -> Record:
        return self._write(lambda tx: self._forget_session(tx, session_id))

    def forget_user(self, user_id: str) -> Record:
        def work(tx: Any) -> Record:
            # The embedded engine's keys, in its order: the graph counts, then users.
            counts = dict.fromkeys(
                ("sessions", "actions", "memories", "chunks", "entities", "injections"), 0
            )
            for row in _rows(tx, "forget/user_sessions", user_id=user_id):
                for key, value in self._forget_session(tx, row["session_id"]).items():
                    counts[key] += value
            memories = _rows(tx, "forget/user_memories", user_id=user_id)
            self._forget_user_interactions(tx, user_id)  # type: ignore[attr-defined]
            chunks, entities = self._collect_garbage(
                tx, [h for r in memories for h in r["chunk_hashes"]]
            )
            counts["memories"] += len(memories)
            counts["chunks"] += chunks
            counts["entities"] += entities
            counts["injections"] += _count(
                _rows(tx, "forget/user_injections", user_id=user_id), "deleted"
            )
            counts["users"] = _count(_rows(tx, "forget/user", user_id=user_id), "deleted")
            return counts

        return self._write(work)
