"""Shared helpers for the hook tests (no tests here): realistic Claude Code / Codex
transcript lines and hook payloads.

Shapes follow what the runtimes write: Claude Code entries with ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp`` and ``message.content`` as a
string or blocks; Codex rollout envelopes ``{timestamp, type, payload}``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any


class ClaudeTranscript:
    """Writes a Claude Code transcript JSONL the way the runtime appends to it."""

    def __init__(self, path: Path, session_id: str, cwd: str = "/home/dev/project") -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.last_uuid: str | None = None
        self.seconds = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _entry(self, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        self.seconds += 1
        entry = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "1.0.51",
            "gitBranch": "main",
            "type": kind,
            "message": {"role": kind, "content": content},
            "uuid": str(uuid.uuid4()),
            "timestamp": f"2026-11-29T10:{self.seconds // 60:02d}:{self.seconds % 60:02d}.000Z",
            **extra,
        }
        if kind == "assistant":
            entry["message"].update(
                {"id": f"msg_{self.seconds}", "model": "claude-sonnet-4", "type": "message"}
            )
        self.last_uuid = entry["uuid"]
        return entry

    def append(self, *entries: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            for entry in entries:
                fh.write(json.dumps(entry) + "\n")

    def user(self, text: str) -> dict[str, Any]:
        entry = self._entry("user", text)
        self.append(entry)
        return entry

    def assistant(self, text: str) -> dict[str, Any]:
        entry = self._entry("assistant", [{"type": "text", "text": text}])
        self.append(entry)
        return entry

    def tool_use(self, name: str, tool_input: dict[str, Any], result: str) -> tuple[str, str, str]:
        """An assistant turn calling a tool (after thinking), and the tool's result:
        returns (tool_use id, uuid of the call entry, uuid of the result entry)."""
        tool_id = f"toolu_{uuid.uuid4().hex[:20]}"
        call = self._entry(
            "assistant",
            [
                {"type": "thinking", "thinking": "Let me check.", "signature": "sig"},
                {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
            ],
        )
        res = self._entry(
            "user",
            [{"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": False}],
            toolUseResult={"stdout": result, "stderr": ""},
        )
        self.append(call, res)
        return tool_id, call["uuid"], res["uuid"]

    def noise(self) -> None:
        """Entries that are not conversation."""
        self.append(
            {"type": "summary", "summary": "Project setup", "leafUuid": str(uuid.uuid4())},
            {
                "type": "file-history-snapshot",
                "messageId": str(uuid.uuid4()),
                "snapshot": {"trackedFileBackups": {}},
                "isSnapshotUpdate": False,
            },
        )


def claude_payload(event: str, session_id: str, transcript: Path | None, **extra: Any) -> str:
    payload: dict[str, Any] = {
        "session_id": session_id,
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    return json.dumps(payload)


def codex_rollout_lines(session_id: str) -> list[dict[str, Any]]:
    """A short Codex rollout: meta, injected context, prompt, a shell call, answer."""
    ts = "2026-11-29T10:00:00.000Z"
    item = lambda payload: {"timestamp": ts, "type": "response_item", "payload": payload}  # noqa: E731
    return [
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {"id": session_id, "cwd": "/home/dev/project", "cli_version": "0.65.0"},
        },
        item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                ],
            }
        ),
        item(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "list files"}],
            }
        ),
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "list files"},
        },
        item({"type": "reasoning", "summary": [], "encrypted_content": "xyz"}),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["ls"]}',
                "call_id": "call_1",
            }
        ),
        item(
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": {"content": "README.md", "success": True},
            }
        ),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "One file."}],
            }
        ),
    ]
