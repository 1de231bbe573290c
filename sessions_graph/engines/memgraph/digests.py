"""Session digests on the Memgraph engine: properties of the Session node
(``digest``, its body as JSON, and ``digest_source``, ``digest_substance``,
``digest_action_count``, ``digest_input_hash``, ``digest_built_at``), so that
a digest lives and dies with its session. The Cypher is in
``cypher/digest/``; the plumbing (``_read``, ``_write``) comes from
``engine.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence

from sessions_graph.engines.base import Record
from sessions_graph.engines.memgraph.rows import _count, _rows


def _digest_record(row: Record) -> Record:
    row["substance"] = bool(row["substance"])
    row["body"] = json.loads(row["body"])
    return row


class Digests:
    """Save and read session digests."""

    def save_digest(self, digest: Record) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "digest/save",
                session_id=digest["session_id"],
                user_id=digest["user_id"],
                source=digest["source"],
                substance=bool(digest["substance"]),
                body=json.dumps(digest["body"], ensure_ascii=False),
                action_count=digest["action_count"],
                input_hash=digest.get("input_hash"),
                built_at=digest["built_at"],
            )
        )
        return _count(rows, "saved") > 0

    def get_digest(self, session_id: str) -> Record | None:
        rows = self._read("digest/get", session_id=session_id)
        return _digest_record(rows[0]) if rows else None

    def session_digests(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        rows = self._read("digest/many", user_id=user_id, session_ids=list(session_ids))
        return [_digest_record(r) for r in rows]
