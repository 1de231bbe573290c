"""The injection ledger on the Memgraph engine: one ``:Injection`` node per
injection, linked from its Session (``RECEIVED``), its item ids a list
property, read per session on the ``:Injection(session_id)`` index. The
mixin reaches the plumbing (``_read``, ``_write``) through ``self``; it
comes from ``engine.py``."""

from __future__ import annotations

from sessions_graph.engines.base import Record
from sessions_graph.engines.memgraph.rows import _rows


class Injections:
    """The injection ledger operations of ``MemgraphEngine``."""

    def record_injection(self, injection: Record) -> None:
        params = {**injection, "item_ids": list(injection["item_ids"])}
        self._write(lambda tx: _rows(tx, "injection/record", **params))

    def injected_items(self, user_id: str, session_id: str) -> set[str]:
        rows = self._read("injection/items", user_id=user_id, session_id=session_id)
        return {item for row in rows for item in row["item_ids"] or ()}

    def list_injections(self, user_id: str, session_id: str | None, limit: int) -> list[Record]:
        rows = self._read("injection/list", user_id=user_id, session_id=session_id, limit=limit)
        return [{**r, "item_ids": list(r["item_ids"] or ())} for r in rows]

    def injection_totals(self, user_id: str, since: str) -> Record:
        rows = self._read("injection/totals", user_id=user_id, since=since)
        row = rows[0] if rows else {}
        return {
            "tokens_since": row.get("tokens_since") or 0,
            "session_tokens": list(row.get("session_tokens") or ()),
        }
