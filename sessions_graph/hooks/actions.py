"""The action record the hook path hands to ``SessionsGraph.record_actions``."""

from __future__ import annotations

from typing import Any

from sessions_graph.provenance import origin

#: One action as ``record_actions`` accepts it.
Action = dict[str, Any]


def digest(text: str) -> str:
    """A short stable hash of ``text`` for derived action ids (hooks and the
    connector derive ids the same way)."""
    # hashlib loads OpenSSL (~2 ms): imported only when an id must be derived.
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def short(value: Any) -> str | None:
    """A string field the store accepts (<= 512 chars), else None."""
    return value if isinstance(value, str) and len(value) <= 512 else None


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
    """An action, with its origin (``provenance``) read from what it is."""
    return {
        "action_id": action_id,
        "action_type": action_type,
        "text": text,  # the façade replaces lone surrogates
        "timestamp": short(timestamp),
        "tool_name": tool_name,  # callers pass these through ``short``
        "tool_use_id": tool_use_id,
        "is_error": is_error,
        "origin": origin(action_type, text, tool_name),
    }
