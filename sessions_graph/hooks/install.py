"""Writing the ``sessions-graph hook`` command into an agent's hook settings.

Claude Code reads ``hooks`` from ``.claude/settings.json`` (project) or
``~/.claude/settings.json`` (user); Codex reads the same shape from
``.codex/hooks.json`` / ``~/.codex/hooks.json``::

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "..."}]}]}}

Installing is idempotent: an event that already runs our command is left
alone, one that runs an older sessions-graph command (another venv, another
path) gets the new command in place, and every other key and hook is kept.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from sessions_graph.errors import ConfigError

CLAUDE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "SessionEnd",
)
#: Codex has no SessionEnd: its Stop marks the session pending instead.
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact")
#: Events whose matcher selects tools; "*" makes ours see every tool.
_TOOL_EVENTS = frozenset({"PostToolUse"})


def hook_command() -> str:
    """The command to install, by absolute path: hook processes often run with
    a PATH that lacks the user's venv, so ``sessions-graph`` alone may not resolve."""
    script = Path(sys.executable).parent / "sessions-graph"
    if script.is_file() and os.access(script, os.X_OK):
        return f"{shlex.quote(str(script))} hook"
    return f"{shlex.quote(sys.executable)} -m sessions_graph hook"


def is_ours(command: Any) -> bool:
    """Whether a hook command is a sessions-graph hook (any install path)."""
    if not isinstance(command, str):
        return False
    words = command.split()
    return words[-1:] == ["hook"] and any(
        w.endswith("sessions-graph") or w == "sessions_graph" for w in words
    )


def install_hooks(settings_file: Path, events: tuple[str, ...], command: str) -> list[str]:
    """Make every event in ``events`` run ``command``; return what changed (may be [])."""
    data = _load(settings_file)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{settings_file}: 'hooks' is not an object; not touching it")
    changes = []
    for event in events:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{settings_file}: hooks.{event} is not a list; not touching it")
        change = _install_event(groups, command, event in _TOOL_EVENTS)
        if change:
            changes.append(f"{event}: {change}")
    if changes:
        _write(settings_file, data)
    return changes


def _install_event(groups: list[Any], command: str, all_tools: bool) -> str | None:
    found = False
    updated = False
    for group in groups:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and is_ours(hook.get("command")):
                found = True
                if hook["command"] != command:
                    hook["command"] = command
                    updated = True
    if updated:
        return f"updated command to {command}"
    if found:
        return None
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if all_tools:
        group = {"matcher": "*", **group}
    groups.append(group)
    return f"added {command}"


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; not touching it")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    # Temp file + rename: the agent may read its settings at any moment.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.sessions-graph.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
