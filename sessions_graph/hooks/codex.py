"""Codex rollout entries and notify payloads → Actions.

Codex writes each session to a rollout JSONL
(``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``) whose lines are
envelopes ``{"timestamp", "type", "payload"}``. Conversation lives in
``type: "response_item"`` lines: ``payload.type`` ``message`` (``role``
user / assistant / developer, ``content`` blocks ``input_text`` /
``output_text``), ``function_call`` / ``custom_tool_call`` /
``local_shell_call`` / ``web_search_call`` (tool calls, keyed by
``call_id``) and ``function_call_output`` / ``custom_tool_call_output`` (tool
results). ``event_msg`` lines repeat the same conversation for the UI and
``reasoning`` items are encrypted, so both are skipped. Older rollouts wrote
the items bare (no envelope); they are read the same way.

Rollout lines carry no id, but the file is append-only, so a line's byte
offset is stable: the action id is a hash of (session, offset) plus a block
index, which makes re-imports idempotent.

Codex hooks (``hooks.json``) send Claude-compatible payloads whose
``transcript_path`` is the rollout, so they go through the same import. The
older ``notify`` program gets an ``agent-turn-complete`` JSON argument with
the turn's input messages and last assistant message but no rollout path;
``notify_actions`` records those, with ids derived from the turn id.
"""

from __future__ import annotations

import json
from typing import Any

from sessions_graph.hooks.actions import Action, digest, make_action, short
from sessions_graph.hooks.claude import content_text

#: ``payload.type`` values of response items that are tool calls.
_CALL_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
#: Item types a legacy (envelope-less) rollout line may have.
ITEM_TYPES = frozenset({"message"}) | _CALL_TYPES | _RESULT_TYPES

#: User-role messages Codex injects itself (environment, AGENTS.md, ...).
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md")


def line_id(session_id: str, offset: int, index: int = 0) -> str:
    """Stable action id for block ``index`` of the rollout line at ``offset``."""
    key = digest(f"{session_id}\0{offset}")
    return f"cx-{key}" if index == 0 else f"cx-{key}:{index}"


def entry_actions(entry: dict[str, Any], session_id: str, offset: int) -> list[Action]:
    """Actions of one rollout line (envelope or legacy bare item)."""
    if "payload" in entry:
        if entry.get("type") != "response_item" or not isinstance(entry["payload"], dict):
            return []
        item, timestamp = entry["payload"], entry.get("timestamp")
    else:
        item, timestamp = entry, entry.get("timestamp")
    timestamp = timestamp if isinstance(timestamp, str) else None
    kind = item.get("type")
    if kind == "message":
        return _message_actions(item, session_id, offset, timestamp)
    if kind in _CALL_TYPES:
        args = item.get("arguments", item.get("input", item.get("action")))
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        name = item.get("name") or kind.removesuffix("_call")
        namespace = item.get("namespace")
        if isinstance(namespace, str) and namespace and isinstance(name, str):
            # An MCP tool: Codex names it ``recall`` in ``mcp__<server>``.
            name = f"{namespace}__{name}"
        return [
            make_action(
                line_id(session_id, offset),
                "tool_call",
                text,
                timestamp,
                tool_name=short(name),
                tool_use_id=short(item.get("call_id") or item.get("id")),
            )
        ]
    if kind in _RESULT_TYPES:
        output = item.get("output")
        is_error = False
        if isinstance(output, dict):  # {"content": ..., "success": bool}
            is_error = output.get("success") is False
            output = output.get("content")
        return [
            make_action(
                line_id(session_id, offset),
                "tool_result",
                content_text(output),
                timestamp,
                tool_use_id=short(item.get("call_id")),
                is_error=is_error,
            )
        ]
    return []


def _message_actions(
    item: dict[str, Any], session_id: str, offset: int, timestamp: str | None
) -> list[Action]:
    role = item.get("role")
    content = item.get("content")
    blocks = [{"text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return []
    actions = []
    for index, block in enumerate(blocks):
        text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str) or not text.strip():
            continue
        if role == "assistant":
            action_type = "assistant_message"
        elif role == "user" and not text.lstrip().startswith(_INJECTED_PREFIXES):
            action_type = "user_message"
        else:  # developer / system instructions and injected context
            action_type = "system_message"
        actions.append(
            make_action(line_id(session_id, offset, index), action_type, text, timestamp)
        )
    return actions


def notify_actions(payload: dict[str, Any]) -> list[Action]:
    """The user inputs and final answer of a notify ``agent-turn-complete`` payload."""
    turn = payload.get("turn-id")
    thread = payload.get("thread-id")
    if not isinstance(turn, str) or not isinstance(thread, str):
        return []
    key = digest(f"{thread}\0{turn}")
    actions = []
    inputs = payload.get("input-messages")
    for index, text in enumerate(inputs if isinstance(inputs, list) else []):
        if isinstance(text, str) and text.strip():
            actions.append(make_action(f"cxn-{key}:{index}", "user_message", text, None))
    answer = payload.get("last-assistant-message")
    if isinstance(answer, str) and answer.strip():
        actions.append(make_action(f"cxn-{key}:out", "assistant_message", answer, None))
    return actions
