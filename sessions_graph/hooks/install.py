"""Writing (and removing) sessions-graph in an agent's settings: the hook
command on every session event, and the MCP server.

Claude Code reads ``hooks`` from ``.claude/settings.json`` (project) or
``~/.claude/settings.json`` (user); Codex reads the same shape from
``.codex/hooks.json`` / ``~/.codex/hooks.json``::

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "..."}]}]}}

Claude Code reads MCP servers from ``mcpServers`` in ``~/.claude.json`` (user
scope) or in the project's ``.mcp.json`` (project scope); Codex from
``[mcp_servers.<name>]`` tables of ``~/.codex/config.toml``.

Installing is idempotent: an event that already runs our command is left
alone, one that runs an older sessions-graph command in the plain shape we
write (another venv, another path) gets the new command in place, a command
of ours the user customised (an environment assignment, a wrapper, extra
words) is kept as it is, and every other key and hook is kept. Uninstalling
removes our hook commands and our MCP server entry, and nothing else.

Files are rewritten atomically (temp file, then rename) so that an agent
reading its settings never sees half a file; a symlinked settings file (a
dotfiles repository) is written through the link, and a file keeps its mode
(settings may hold API keys in ``env``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable
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

#: The name our MCP server is registered under, in every agent's settings.
MCP_SERVER_NAME = "sessions-graph"

#: Mode of a settings file we create: they may come to hold API keys.
_NEW_FILE_MODE = 0o600


# -- the commands ----------------------------------------------------------------
def _executable() -> list[str]:
    """How to run sessions-graph, by absolute path: agent runtimes often start
    hooks and MCP servers with a PATH that lacks the user's venv."""
    script = Path(sys.executable).parent / "sessions-graph"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "sessions_graph"]


def hook_command() -> str:
    """The hook command line to install."""
    return shlex.join([*_executable(), "hook"])


def mcp_server_entry() -> dict[str, Any]:
    """Claude Code's ``mcpServers`` entry for ``sessions-graph mcp`` (stdio)."""
    executable = _executable()
    return {"type": "stdio", "command": executable[0], "args": [*executable[1:], "mcp"], "env": {}}


def _runs_sessions_graph(words: list[str]) -> bool:
    return any(w.endswith("sessions-graph") or w == "sessions_graph" for w in words)


def is_ours(command: Any) -> bool:
    """Whether a hook command is a sessions-graph hook (any install path,
    customised or not)."""
    if not isinstance(command, str):
        return False
    words = command.split()
    return words[-1:] == ["hook"] and _runs_sessions_graph(words)


def _is_plain(command: str) -> bool:
    """Whether a hook command of ours is in the shape install writes
    (``<sessions-graph> hook`` or ``<python> -m sessions_graph hook``), so
    that replacing it loses nothing the user wrote."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) == 2:
        return words[0].endswith("/sessions-graph") or words[0] == "sessions-graph"
    return len(words) == 4 and words[1:] == ["-m", "sessions_graph", "hook"]


def _is_our_server(entry: Any) -> bool:
    """Whether an MCP server entry runs ``sessions-graph mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    words = [entry["command"], *(a for a in args if isinstance(a, str))]
    return words[-1:] == ["mcp"] and _runs_sessions_graph(words)


# -- hooks -----------------------------------------------------------------------
def install_hooks(settings_file: Path, events: tuple[str, ...], command: str) -> list[str]:
    """Make every event in ``events`` run ``command``; return what changed (may be [])."""
    data = _load_json(settings_file)
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
        _write_json(settings_file, data)
    return changes


def _install_event(groups: list[Any], command: str, all_tools: bool) -> str | None:
    found = False
    updated = False
    for group in groups:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and is_ours(hook.get("command")):
                found = True
                if hook["command"] != command and _is_plain(hook["command"]):
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


def uninstall_hooks(settings_file: Path) -> list[str]:
    """Remove every sessions-graph hook command from ``settings_file``; a group,
    event list or ``hooks`` object left empty by that goes too. Returns what
    changed (may be [])."""
    if not settings_file.exists():
        return []
    data = _load_json(settings_file)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changes = []
    for event, groups in list(hooks.items()):
        if not isinstance(groups, list):
            continue
        removed = 0
        for group in list(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            kept = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
            if len(kept) == len(inner):
                continue
            removed += len(inner) - len(kept)
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
        if removed:
            changes.append(f"{event}: removed the sessions-graph hook")
            if not groups:
                del hooks[event]
    if not changes:
        return []
    if not hooks:
        del data["hooks"]
    _write_or_remove(settings_file, data)
    return changes


# -- MCP: Claude Code (JSON) ---------------------------------------------------------
def register_mcp_json(config_file: Path, entry: dict[str, Any]) -> list[str]:
    """Register our server in ``mcpServers`` of a Claude Code JSON file
    (``~/.claude.json`` or a project's ``.mcp.json``). A same-named entry the
    user changed (other command, an ``env``) is kept."""
    data = _load_json(config_file)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{config_file}: 'mcpServers' is not an object; not touching it")
    current = servers.get(MCP_SERVER_NAME)
    if current == entry:
        return []
    if current is not None and not _is_replaceable(current, entry):
        return []
    servers[MCP_SERVER_NAME] = entry
    _write_json(config_file, data, new_mode=_mode_for(config_file))
    verb = "updated" if current is not None else "added"
    shown = shlex.join([entry["command"], *entry["args"]])
    return [f"mcpServers.{MCP_SERVER_NAME}: {verb} {shown}"]


def _is_replaceable(current: Any, entry: dict[str, Any]) -> bool:
    """An entry of ours in the plain shape (another venv): replace it; one the
    user customised, or a server of the same name that is not ours: keep it."""
    if not _is_our_server(current):
        return False
    return not current.get("env") and set(current) <= set(entry)


def unregister_mcp_json(config_file: Path) -> list[str]:
    """Remove our server from ``mcpServers`` (and ``mcpServers`` if that left it empty)."""
    if not config_file.exists():
        return []
    data = _load_json(config_file)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not _is_our_server(servers.get(MCP_SERVER_NAME)):
        return []
    del servers[MCP_SERVER_NAME]
    if not servers:
        del data["mcpServers"]
    _write_or_remove(config_file, data)
    return [f"mcpServers.{MCP_SERVER_NAME}: removed"]


def _mode_for(path: Path) -> int:
    # A project's .mcp.json is meant to be shared (committed); files in the
    # home directory may hold credentials.
    return 0o644 if path.name == ".mcp.json" else _NEW_FILE_MODE


# -- MCP: Codex (TOML) ------------------------------------------------------------------
#: The header of our table in config.toml, bare or quoted key.
_CODEX_HEADER = re.compile(
    r'^\s*\[\s*mcp_servers\s*\.\s*(?:sessions-graph|"sessions-graph"|\'sessions-graph\')\s*\]'
)
#: Any table header (or array-of-tables header).
_ANY_HEADER = re.compile(r"^\s*\[")
#: A sub-table of ours, e.g. [mcp_servers.sessions-graph.env].
_CODEX_SUBTABLE = re.compile(
    r'^\s*\[\s*mcp_servers\s*\.\s*(?:sessions-graph|"sessions-graph"|\'sessions-graph\')\s*\.'
)


def register_codex_mcp(config_file: Path, command: str, args: list[str]) -> list[str]:
    """Add ``[mcp_servers.sessions-graph]`` with ``command`` / ``args`` to a Codex
    ``config.toml``; a table of ours in the plain shape is rewritten, one the
    user customised (an env, other keys) is kept."""
    text = _read_text(config_file)
    current = _parse_toml(config_file, text).get("mcp_servers", {}).get(MCP_SERVER_NAME)
    wanted = {"command": command, "args": args}
    if current == wanted:
        return []
    if current is not None and not (_is_our_server(current) and set(current) <= set(wanted)):
        return []
    block = (
        f"[mcp_servers.{MCP_SERVER_NAME}]\n"
        f"command = {_toml_string(command)}\n"
        f"args = [{', '.join(_toml_string(a) for a in args)}]\n"
    )
    if current is None:
        if text and not text.endswith("\n"):
            text += "\n"
        new_text = text + ("\n" if text.strip() else "") + block
    else:
        new_text = _replace_codex_table(config_file, text, block)
    parsed = _parse_toml(config_file, new_text).get("mcp_servers", {}).get(MCP_SERVER_NAME)
    if parsed != wanted:  # our edit did not say what we meant: write nothing
        raise ConfigError(
            f"{config_file}: cannot add [mcp_servers.{MCP_SERVER_NAME}] safely; add it by hand"
        )
    _write_text(config_file, new_text)
    verb = "updated" if current is not None else "added"
    return [f"[mcp_servers.{MCP_SERVER_NAME}]: {verb} {shlex.join([command, *args])}"]


def unregister_codex_mcp(config_file: Path) -> list[str]:
    """Remove our ``[mcp_servers.sessions-graph]`` table (and its sub-tables)."""
    if not config_file.exists():
        return []
    text = _read_text(config_file)
    current = _parse_toml(config_file, text).get("mcp_servers", {}).get(MCP_SERVER_NAME)
    if not _is_our_server(current):
        return []
    new_text = _replace_codex_table(config_file, text, "")
    if MCP_SERVER_NAME in _parse_toml(config_file, new_text).get("mcp_servers", {}):
        raise ConfigError(
            f"{config_file}: cannot remove [mcp_servers.{MCP_SERVER_NAME}] safely;"
            " remove it by hand"
        )
    if new_text.strip():
        _write_text(config_file, new_text)
    else:
        _write_or_remove(config_file, {})
    return [f"[mcp_servers.{MCP_SERVER_NAME}]: removed"]


def _replace_codex_table(config_file: Path, text: str, block: str) -> str:
    """``text`` with our table (header to the next foreign header) replaced by ``block``."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _CODEX_HEADER.match(line)), None)
    if start is None:  # defined as dotted keys or an inline table: leave it to the user
        raise ConfigError(
            f"{config_file}: mcp_servers.{MCP_SERVER_NAME} is not a [table] of its own;"
            " edit it by hand"
        )
    end = start + 1
    while end < len(lines) and (
        not _ANY_HEADER.match(lines[end]) or _CODEX_SUBTABLE.match(lines[end])
    ):
        end += 1
    # Blank lines before the next table belong to the layout, not to us.
    while block == "" and end > start + 1 and not lines[end - 1].strip():
        end -= 1
    head = "".join(lines[:start])
    if block == "" and head.endswith("\n\n"):
        head = head[:-1]
    return head + block + "".join(lines[end:])


def _toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string for the text of a path.
    return json.dumps(value, ensure_ascii=False)


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it first") from None


# -- files -------------------------------------------------------------------------------
def check_readable(path: Path) -> None:
    """Raise ``ConfigError`` if a settings file we are about to change does not
    parse, so that an install touching two files changes neither."""
    text = _read_text(path)
    if path.suffix == ".toml":
        _parse_toml(path, text)
    else:
        _load_json(path)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else exc
        raise ConfigError(f"cannot read {path}: {reason or exc}") from None


def _load_json(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; not touching it")
    return data


def _write_or_remove(path: Path, data: dict[str, Any]) -> None:
    """Write what uninstalling left; a file left empty is one install created
    (or an empty one), and Claude Code refuses an empty ``.mcp.json``: remove it."""
    if data:
        _write_json(path, data)
        return
    try:
        path.unlink()
    except OSError as exc:
        _write_error(path, exc)


def _write_json(path: Path, data: dict[str, Any], *, new_mode: int = _NEW_FILE_MODE) -> None:
    _write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", new_mode=new_mode)


def _write_text(path: Path, text: str, *, new_mode: int = _NEW_FILE_MODE) -> None:
    """Replace the file's content atomically, through a symlink (the link stays
    a link, its target gets the content) and keeping the file's mode."""
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    _atomically(target, text, mode, on_error=lambda exc: _write_error(path, exc))


def _atomically(target: Path, text: str, mode: int, on_error: Callable[[OSError], Any]) -> None:
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        on_error(exc)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _write_error(path: Path, exc: OSError) -> None:
    raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


# -- Claude Code: allowing our read-only tools ------------------------------------
#: The MCP server's tools that only read: the model may call them without
#: asking once the user allows them (Claude Code refuses an unallowed tool in
#: print mode, and asks for it in a session).
READ_ONLY_TOOLS = ("recall", "search_memories", "list_sessions", "get_session", "session_entities")


def allowed_tool_rules() -> list[str]:
    """Our read-only tools as Claude Code permission rules (``mcp__<server>__<tool>``)."""
    return [f"mcp__{MCP_SERVER_NAME}__{tool}" for tool in READ_ONLY_TOOLS]


def allow_tools(settings_file: Path) -> list[str]:
    """Add our read-only tools to ``permissions.allow`` of a Claude Code
    settings file, each once; every other rule stays. Returns what changed."""
    data = _load_json(settings_file)
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(f"{settings_file}: 'permissions' is not an object; not touching it")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ConfigError(f"{settings_file}: permissions.allow is not a list; not touching it")
    added = [rule for rule in allowed_tool_rules() if rule not in allow]
    if not added:
        return []
    allow.extend(added)
    _write_json(settings_file, data)
    return [f"permissions.allow: added {', '.join(added)}"]


def disallow_tools(settings_file: Path) -> list[str]:
    """Remove exactly the rules ``allow_tools`` adds (a rule of the user's own,
    such as ``mcp__sessions-graph`` for the whole server, stays); an ``allow``
    list or ``permissions`` object left empty goes too. Returns what changed."""
    if not settings_file.exists():
        return []
    data = _load_json(settings_file)
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        return []
    ours = set(allowed_tool_rules())
    kept = [rule for rule in allow if rule not in ours]
    if len(kept) == len(allow):
        return []
    removed = [rule for rule in allow if rule in ours]
    if kept:
        permissions["allow"] = kept  # type: ignore[index]
    else:
        del permissions["allow"]  # type: ignore[union-attr]
        if not permissions:
            del data["permissions"]
    _write_or_remove(settings_file, data)
    return [f"permissions.allow: removed {', '.join(removed)}"]
