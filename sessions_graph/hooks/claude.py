"""Claude Code transcript entries → Actions.

A Claude Code transcript is JSONL; each message entry has ``type`` ("user" /
"assistant"), a ``uuid``, a ``timestamp`` and ``message.content``, either a
string or a list of blocks (``text``, ``tool_use``, ``tool_result``,
``thinking``, ``image``). Other entry types (``summary``,
``file-history-snapshot``, progress records) carry no conversation and are
skipped; ``system`` entries with text become system messages.

Action ids come from the entry's ``uuid`` (block 0) or ``uuid:<block index>``,
so importing the same transcript twice, from any process, stores nothing
twice. ``thinking`` blocks are skipped: they are the model's scratchpad, often
signed or redacted, and not part of what was said or done.
"""

from __future__ import annotations

import json
from typing import Any

from sessions_graph.hooks.actions import Action, make_action, short
from sessions_graph.validation import ID_PATTERN

#: Content block types that carry text.
_TEXT_BLOCKS = ("text", "input_text", "output_text")


def block_id(uuid: str, index: int) -> str | None:
    """The action id of block ``index`` of the entry ``uuid`` (None if invalid)."""
    action_id = uuid if index == 0 else f"{uuid}:{index}"
    return action_id if ID_PATTERN.fullmatch(action_id) else None


def content_text(content: Any) -> str:
    """Plain text of a string or a list of content blocks (tool results nest them)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for block in content:
        if isinstance(block, dict):
            # Codex's tool outputs hold ``input_text`` blocks (an MCP result).
            if block.get("type") in _TEXT_BLOCKS and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "image":
                parts.append("[image]")
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)


def entry_actions(entry: dict[str, Any]) -> list[Action]:
    """The actions one transcript entry yields, in block order."""
    kind = entry.get("type")
    uuid = entry.get("uuid")
    if kind not in ("user", "assistant", "system") or not isinstance(uuid, str):
        return []
    timestamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
    if kind == "system":
        text = entry.get("content")
        action_id = block_id(uuid, 0)
        if not isinstance(text, str) or not text.strip() or action_id is None:
            return []
        return [make_action(action_id, "system_message", text, timestamp)]
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return []
    # Meta entries (command caveats, compaction summaries) are injected by the
    # runtime, not typed by the user: keep them, but as system messages.
    meta = bool(entry.get("isMeta") or entry.get("isCompactSummary"))
    text_type = "system_message" if meta else f"{kind}_message"
    actions = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        action_id = block_id(uuid, index)
        if action_id is None:
            continue
        action = _block_action(block, action_id, text_type, timestamp)
        if action is not None:
            actions.append(action)
    return actions


def _block_action(
    block: dict[str, Any], action_id: str, text_type: str, timestamp: str | None
) -> Action | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if isinstance(text, str) and text.strip():
            return make_action(action_id, text_type, text, timestamp)
        return None
    if kind == "tool_use":
        return make_action(
            action_id,
            "tool_call",
            json.dumps(block.get("input"), ensure_ascii=False, sort_keys=True),
            timestamp,
            tool_name=short(block.get("name")),
            tool_use_id=short(block.get("id")),
        )
    if kind == "tool_result":
        return make_action(
            action_id,
            "tool_result",
            content_text(block.get("content")),
            timestamp,
            tool_use_id=short(block.get("tool_use_id")),
            is_error=bool(block.get("is_error")),
        )
    return None  # thinking, redacted_thinking, image, and kinds not known yet
