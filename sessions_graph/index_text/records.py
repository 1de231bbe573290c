"""Record shapes both engines build the same way for the recall lanes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Record = dict[str, Any]


def group_entity_units(rows: Iterable[Record]) -> list[Record]:
    """One record per entity name from one row per (mention, unit): the type
    and descriptions of the user's own mentions, and the units, each once.

    Rows: ``name``, ``entity_type``, ``description``, ``unit_kind``,
    ``unit_id``, ``session_id``, ``timestamp``, ``project_key``, ``cwd``."""
    entities: dict[str, Record] = {}
    for row in rows:
        entity = entities.setdefault(
            row["name"],
            {"name": row["name"], "entity_type": None, "descriptions": {}, "units": {}},
        )
        entity["entity_type"] = entity["entity_type"] or row.get("entity_type")
        if row.get("description"):
            entity["descriptions"][row["description"]] = None
        entity["units"].setdefault(
            (row["unit_kind"], row["unit_id"]),
            {
                key: row.get(key)
                for key in ("unit_kind", "unit_id", "session_id", "timestamp", "project_key", "cwd")
            },
        )
    return [
        {
            "name": e["name"],
            "entity_type": e["entity_type"],
            "description": "\n".join(e["descriptions"]) or None,
            "units": list(e["units"].values()),
        }
        for e in entities.values()
    ]
