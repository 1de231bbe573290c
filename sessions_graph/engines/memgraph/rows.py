"""What more than one concern module of the Memgraph engine shares: running a
named query in a transaction, the record conversions, the user key that scopes
text search, and the status parameters. The names with a leading underscore
are private to this package."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from sessions_graph.cypher import load
from sessions_graph.engines.base import FAILED, PENDING, RECONCILED, RUNNING, Record

#: The status values, as the $parameters the claim and queue queries use.
_STATUS_PARAMS = {
    "pending": PENDING,
    "running": RUNNING,
    "reconciled": RECONCILED,
    "failed": FAILED,
}


def user_key(user_id: str) -> str:
    """The token that scopes a user's memories in the text index."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]


def _rows(tx: Any, name: str, **params: Any) -> list[Record]:
    """Run the named query in ``tx`` and return its rows as dicts."""
    return tx.run(load(name), params).data()


def _count(rows: Sequence[Record], key: str) -> int:
    """The count a single-row aggregate returned (0 if it returned no row)."""
    return rows[0][key] if rows else 0


def _session_record(row: Record) -> Record:
    if row.get("last_summary"):
        row["last_summary"] = json.loads(row["last_summary"])
    row["content_version"] = row.get("content_version") or 0
    row["action_count"] = row.get("action_count") or 0
    return row
