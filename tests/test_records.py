"""The plain records (``sessions_graph.records``) are what the models dump.

The CLI's read commands print plain records so that they never import
pydantic; their JSON must stay what the models gave. These tests hold the
declared fields to the models' and compare the two on rows of every shape
an engine returns (extra columns, optional ones missing, SQLite's integers
for booleans).
"""

from __future__ import annotations

from typing import Any

import pytest

from sessions_graph import models
from sessions_graph.records import FIELDS, REQUIRED, plain


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_fields_are_the_models_fields_in_order_with_their_defaults(name: str) -> None:
    model = getattr(models, name)
    declared = [(field, default) for field, default, _ in FIELDS[name]]
    expected = [
        (field, REQUIRED if info.is_required() else info.default)
        for field, info in model.model_fields.items()
    ]
    assert declared == expected


ROWS: list[tuple[str, dict[str, Any]]] = [
    (
        "Memory",
        {
            "memory_id": "m1",
            "user_id": "u",
            "content": "c",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "score": 3,  # an engine's integer score: the model makes it 3.0
            "rank": 7,  # an extra column: left out
        },
    ),
    (
        "Session",
        {
            "user_id": "u",  # another order than the model's
            "session_id": "s",
            "last_summary": {"status": "reconciled", "llm_calls": 2},
            "action_count": 4,
        },
    ),
    (
        "Action",
        {
            "action_id": "a",
            "session_id": "s",
            "seq": 0,
            "action_type": "tool_result",
            "text": "x",
            "is_error": 1,  # SQLite's boolean
            "redactions": 0,
        },
    ),
    ("EntityMention", {"name": "redis", "workspace": "base", "mentions": 2}),
    (
        "Interaction",
        {
            "interaction_id": "i",
            "user_id": "u",
            "session_id": "s",
            "source": "recall",
            "created_at": "t",
            "question": "q",
            "context": [
                {"key": "turn:a", "kind": "turn", "id": "a", "text": "t", "used": 1},
                {"key": "memory:m", "kind": "memory", "id": "m"},
            ],
            "feedback": 4,
            "seq_from": 3,
        },
    ),
]


@pytest.mark.parametrize(("name", "row"), ROWS, ids=[name for name, _ in ROWS])
def test_a_plain_record_is_the_models_dump(name: str, row: dict[str, Any]) -> None:
    dumped = getattr(models, name)(**row).model_dump()
    record = plain(name, row)
    assert record == dumped
    assert list(record) == list(dumped)  # JSON output keeps the key order
    assert [type(v) for v in record.values()] == [type(v) for v in dumped.values()]
