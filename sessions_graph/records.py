"""The public records as plain dicts: what ``models`` would dump, without pydantic.

Importing pydantic costs 60-80 ms, five to ten times the interpreter's own
start-up, and a read command of the CLI does a few milliseconds of work. So
the façade's readers can hand back, with ``plain=True``, each record as the
dict its model's ``model_dump()`` gives: the model's fields in its order,
the defaults filled in, anything else left out, and the scalar types the
model would coerce to. ``FIELDS`` declares each model's fields for that;
a test holds it equal to ``models`` so that the two cannot drift apart.

Engines are trusted to return the right kinds of values (their records are
checked when written), so nothing here validates: a plain record is the
same data as the model, not a second set of checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A field with no default: the engine's record always has it.
REQUIRED: Any = ...

#: Per model (its class name in ``models``): each field, its default
#: (``REQUIRED`` for none) and the scalar type a present value is coerced to
#: (None: kept as it is), in the model's order.
FIELDS: dict[str, tuple[tuple[str, Any, type | None], ...]] = {
    "Memory": (
        ("memory_id", REQUIRED, None),
        ("user_id", REQUIRED, None),
        ("content", REQUIRED, None),
        ("session_id", None, None),
        ("created_at", REQUIRED, None),
        ("updated_at", REQUIRED, None),
        ("project_key", None, None),
        ("score", None, float),
    ),
    "Session": (
        ("session_id", REQUIRED, None),
        ("user_id", REQUIRED, None),
        ("started_at", None, None),
        ("ended_at", None, None),
        ("cwd", None, None),
        ("project_key", None, None),
        ("reconciliation_status", None, None),
        ("reconciled_at", None, None),
        ("reconciliation_error", None, None),
        ("last_summary", None, None),
        ("content_version", 0, int),
        ("action_count", 0, int),
    ),
    "Action": (
        ("action_id", REQUIRED, None),
        ("session_id", REQUIRED, None),
        ("seq", REQUIRED, int),
        ("action_type", REQUIRED, None),
        ("text", "", None),
        ("timestamp", None, None),
        ("tool_name", None, None),
        ("tool_use_id", None, None),
        ("is_error", False, bool),
        ("redactions", 0, int),
        ("origin", "conversation", None),
    ),
    "EntityMention": (
        ("name", REQUIRED, None),
        ("entity_type", None, None),
        ("workspace", REQUIRED, None),
        ("description", None, None),
        ("mentions", 0, int),
    ),
    "InteractionItem": (
        ("key", REQUIRED, None),
        ("kind", REQUIRED, None),
        ("id", REQUIRED, None),
        ("text", "", None),
        ("used", None, bool),
    ),
    "Interaction": (
        ("interaction_id", REQUIRED, None),
        ("user_id", REQUIRED, None),
        ("session_id", REQUIRED, None),
        ("source", REQUIRED, None),
        ("created_at", REQUIRED, None),
        ("expires_at", None, None),
        ("question", REQUIRED, None),
        ("context", REQUIRED, None),
        ("answer", None, None),
        ("answered_at", None, None),
        ("feedback", None, int),
    ),
}


def plain(model: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` as ``models.<model>(**row).model_dump()`` would give it."""
    record: dict[str, Any] = {}
    for name, default, kind in FIELDS[model]:
        value = row[name] if default is REQUIRED else row.get(name, default)
        if kind is not None and value is not None and type(value) is not kind:
            value = kind(value)
        record[name] = value
    if model == "Interaction":  # its one nested record
        record["context"] = [plain("InteractionItem", item) for item in record["context"]]
    return record
