"""Memories on the Memgraph engine: save, get, list, search (per user, inside
Tantivy or, for prefix queries, over the user's own memories), update and
delete. The mixin reaches the plumbing (``_read``, ``_write``,
``_server_form``, ``search_limit``) and the other concerns' steps
(``_ensure_session``, ``_touch``, ``_collect_garbage``) through ``self``; the
plumbing comes from ``engine.py``."""

from __future__ import annotations

from typing import Any

from sessions_graph.engines.base import Record, memory_id_taken
from sessions_graph.engines.memgraph.rows import _rows, user_key
from sessions_graph.errors import MemoryIdTakenError
from sessions_graph.query import (
    Node,
    has_prefix,
    local_score,
    matches,
    needs_local,
    to_tantivy,
    tokenize,
)


def user_search_query(node: Node, key: str) -> str:
    """The Tantivy query for one user: the user's key is required."""
    return f"+data.user_key:{key} +{to_tantivy(node, 'data.content')}"


class Memories:
    """Save, read, search, update and delete memories."""

    def _save_memory(self, tx: Any, memory: Record) -> None:
        # A caller may choose the id: one in use is refused before anything
        # is written (two transactions racing on a new id are told apart at
        # commit, by the unique constraint: ``engine.translate_error``).
        if _rows(tx, "memory/get", memory_id=memory["memory_id"], user_id=None):
            raise MemoryIdTakenError(memory_id_taken(memory["memory_id"]))
        _rows(
            tx,
            "memory/save",
            **{"project_key": None, **memory},
            user_key=user_key(memory["user_id"]),
        )
        if memory["session_id"]:
            self._ensure_session(tx, memory["session_id"], memory["user_id"], memory["created_at"])
            _rows(
                tx,
                "memory/link_session",
                memory_id=memory["memory_id"],
                session_id=memory["session_id"],
            )
            self._touch(tx, memory["session_id"])

    def save_memory(self, memory: Record) -> None:
        self._write(lambda tx: self._save_memory(tx, memory))

    def get_memory(self, memory_id: str, user_id: str | None = None) -> Record | None:
        rows = self._read("memory/get", memory_id=memory_id, user_id=user_id)
        return rows[0] if rows else None

    def list_memories(self, user_id: str, limit: int) -> list[Record]:
        return self._read("memory/list_by_user", user_id=user_id, limit=limit)

    def list_session_memories(self, session_id: str, limit: int) -> list[Record]:
        return self._read("memory/list_by_session", session_id=session_id, limit=limit)

    def search_memories(self, user_id: str, query: Any, limit: int) -> list[Record]:
        if has_prefix(query) or needs_local(query):
            return self._search_locally(user_id, query, limit)
        rows = self._read(
            self._server_form("memory/search"),
            query=user_search_query(query, user_key(user_id)),
            search_limit=max(self.search_limit, limit),
            user_id=user_id,
        )
        hits = [r for r in rows if matches(query, tokenize(r["content"]))]
        return hits[:limit]

    def _search_locally(self, user_id: str, query: Node, limit: int) -> list[Record]:
        """Prefix queries: evaluate over the user's own memories only."""
        hits = []
        for row in self._read("memory/all_of_user", user_id=user_id):
            tokens = tokenize(row["content"])
            if matches(query, tokens):
                hits.append({**row, "score": local_score(query, tokens)})
        hits.sort(key=lambda r: (r["score"], r["created_at"]), reverse=True)
        return hits[:limit]

    def update_memory(
        self, memory_id: str, content: str, updated_at: str, user_id: str | None = None
    ) -> Record | None:
        def work(tx: Any) -> Record | None:
            rows = _rows(
                tx,
                "memory/update",
                memory_id=memory_id,
                user_id=user_id,
                content=content,
                updated_at=updated_at,
            )
            if rows and rows[0]["session_id"]:
                self._touch(tx, rows[0]["session_id"])
            return rows[0] if rows else None

        return self._write(work)

    def delete_memory(self, memory_id: str, user_id: str | None = None) -> bool:
        def work(tx: Any) -> bool:
            rows = _rows(tx, "memory/delete", memory_id=memory_id, user_id=user_id)
            if not rows:
                return False
            if rows[0]["session_id"]:
                self._touch(tx, rows[0]["session_id"])
            self._collect_garbage(tx, rows[0]["chunk_hashes"])
            return True

        return self._write(work)
