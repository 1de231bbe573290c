"""The action record the hook path hands to ``SessionsGraph.record_actions``."""

from __future__ import annotations

import re
from typing import Any

#: One action as ``record_actions`` accepts it.
Action = dict[str, Any]

#: A UTF-16 surrogate in a ``str``. JSON may escape one alone (``"\ud800"``):
#: valid JSON, but text no UTF-8 store can hold. A proper pair is decoded to
#: one character by ``json``, so any surrogate left in a string is a lone one.
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(value: str) -> str:
    """``value`` with lone surrogates replaced by U+FFFD, so that one odd
    character cannot make the store refuse a whole transcript line."""
    return _SURROGATE.sub("\ufffd", value)


def short(value: Any) -> str | None:
    """A string field the store accepts (<= 512 chars), else None."""
    return clean_text(value) if isinstance(value, str) and len(value) <= 512 else None


def make_action(
    action_id: str,
    action_type: str,
    text: str,
    timestamp: str | None,
    *,
    tool_name: str | None = None,
    tool_use_id: str | None = None,
    is_error: bool = False,
) -> Action:
    return {
        "action_id": action_id,
        "action_type": action_type,
        "text": clean_text(text),
        "timestamp": short(timestamp),
        "tool_name": tool_name,  # callers pass these through ``short``
        "tool_use_id": tool_use_id,
        "is_error": is_error,
    }
