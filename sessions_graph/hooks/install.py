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
(settings may hold API keys in ``env``). Every value we did not add is
written back as it was read: a number keeps its text (``1e400`` is not
turned into ``Infinity``, which Node's ``JSON.parse`` refuses) and a lone
``\ud83d`` escape stays an escape. An install or uninstall touching two
files first works out both new contents (see ``Edit``), then writes them,
and puts the first back if the second cannot be written: all or nothing.

A project's files are committed and shared, so the commands written there
name ``sessions-graph`` as found on ``PATH`` (``portable``); the user's own
files name this machine's executable by its absolute path.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
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
#: How a project's shared files run us: by name, found on each teammate's PATH.
PORTABLE_EXECUTABLE = "sessions-graph"


def _executable(portable: bool) -> list[str]:
    """How to run sessions-graph. By absolute path in the user's own files:
    agent runtimes often start hooks and MCP servers with a PATH that lacks
    the user's venv. By name (``portable``) in a project's files, which are
    committed: this machine's path would not exist on a teammate's."""
    if portable:
        return [PORTABLE_EXECUTABLE]
    script = Path(sys.executable).parent / "sessions-graph"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "sessions_graph"]


def hook_command(portable: bool) -> str:
    """The hook command line to install."""
    return shlex.join([*_executable(portable), "hook"])


def mcp_server_entry(portable: bool) -> dict[str, Any]:
    """Claude Code's ``mcpServers`` entry for ``sessions-graph mcp`` (stdio)."""
    executable = _executable(portable)
    return {"type": "stdio", "command": executable[0], "args": [*executable[1:], "mcp"], "env": {}}


def _runs_sessions_graph(words: Sequence[str], verb: str) -> bool:
    """Whether a command's words end in sessions-graph's ``verb``: the word
    before it names the ``sessions-graph`` executable (any directory), or is
    ``-m sessions_graph``. Whatever comes earlier (an environment assignment,
    a wrapper) is the user's. A command that only mentions sessions-graph
    (``cd ~/src/sessions-graph && ./notify.sh hook``) is not ours."""
    if len(words) < 2 or words[-1] != verb:
        return False
    return os.path.basename(words[-2]) == "sessions-graph" or list(words[-3:-1]) == [
        "-m",
        "sessions_graph",
    ]


def is_ours(command: Any) -> bool:
    """Whether a hook command is a sessions-graph hook (any install path,
    customised or not)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: not a command we wrote
        return False
    return _runs_sessions_graph(words, "hook")


def _is_plain(command: str) -> bool:
    """Whether a hook command of ours (``is_ours``: it splits into words) is
    in the shape install writes (``<sessions-graph> hook`` or ``<python> -m
    sessions_graph hook``), so that replacing it loses nothing the user wrote."""
    words = shlex.split(command)
    if len(words) == 2:
        return words[0].endswith("/sessions-graph") or words[0] == "sessions-graph"
    return len(words) == 4 and words[1:] == ["-m", "sessions_graph", "hook"]


def _is_our_server(entry: Any) -> bool:
    """Whether an MCP server entry runs ``sessions-graph mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    return _runs_sessions_graph([entry["command"], *args], "mcp")


# -- where each client keeps its settings ------------------------------------------
def config_files(project: Path | None, codex: bool) -> tuple[Path, Path]:
    """(hook settings file, MCP settings file) of Claude Code, or Codex with
    ``codex``, in ``project`` (a directory), else at user scope."""
    if project is not None:
        root = project.resolve()
        if codex:
            return root / ".codex" / "hooks.json", root / ".codex" / "config.toml"
        # Project-scope servers live in the project's .mcp.json (which Claude
        # Code asks to approve once).
        return root / ".claude" / "settings.json", root / ".mcp.json"
    # User scope, where the agents themselves look: CODEX_HOME and
    # CLAUDE_CONFIG_DIR move their files (and ~/.claude.json into the latter).
    if codex:
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return home / "hooks.json", home / "config.toml"
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return Path(config_dir) / "settings.json", Path(config_dir) / ".claude.json"
    return Path.home() / ".claude" / "settings.json", Path.home() / ".claude.json"


# -- edits: worked out first, then written together --------------------------------
class Edit:
    """What installing or uninstalling does to one file: the lines to report,
    and the file's new text (None: remove the file). No changes: untouched.

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect``, and
    ``status`` imports this module to read what is installed."""

    __slots__ = ("changes", "new_mode", "path", "text")

    def __init__(
        self,
        path: Path,
        changes: list[str] | None = None,
        text: str | None = None,
        new_mode: int = _NEW_FILE_MODE,  # of a file we create
    ) -> None:
        self.path = path
        self.changes = changes if changes is not None else []
        self.text = text
        self.new_mode = new_mode


def apply_edits(edits: Sequence[Edit]) -> None:
    """Write every edit, or none: if one cannot be written, the files already
    written get their old bytes back and ``ConfigError`` says which failed."""
    pending = [edit for edit in edits if edit.changes]
    for edit in pending:  # an encoding problem shows before anything is written
        if edit.text is not None:
            edit.text.encode("utf-8")
    done: list[tuple[Path, bytes | None, int]] = []
    try:
        for edit in pending:
            target = Path(os.path.realpath(edit.path))
            try:
                before = target.read_bytes()
                mode = target.stat().st_mode & 0o7777
            except FileNotFoundError:
                before, mode = None, edit.new_mode
            except OSError as exc:
                raise ConfigError(f"cannot read {edit.path}: {exc.strerror or exc}") from None
            if edit.text is None:
                _remove(edit.path)
            else:
                _write_text(edit.path, edit.text, new_mode=edit.new_mode)
            done.append((target, before, mode))
    except ConfigError:
        for target, before, mode in reversed(done):
            with contextlib.suppress(OSError, ConfigError):
                if before is None:
                    target.unlink()
                else:
                    _atomically(target, before, mode, on_error=lambda exc: None)
        raise


# -- hooks -----------------------------------------------------------------------
def plan_install_hooks(
    settings_file: Path, events: tuple[str, ...], command: str, *, allow_tools: bool = False
) -> Edit:
    """The edit making every event in ``events`` run ``command``; with
    ``allow_tools``, also allowing our read-only MCP tools (Claude Code), in
    the same file: the model may then call them unasked, and at all in print
    mode, which refuses a tool nobody allowed."""
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
    if allow_tools:
        changes += _allow_tools(settings_file, data)
    return Edit(settings_file, changes, _dump_json(data) if changes else None)


def install_hooks(settings_file: Path, events: tuple[str, ...], command: str) -> list[str]:
    """Make every event in ``events`` run ``command``; return what changed (may be [])."""
    edit = plan_install_hooks(settings_file, events, command)
    apply_edits([edit])
    return edit.changes


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


def plan_uninstall_hooks(settings_file: Path) -> Edit:
    """The edit removing every sessions-graph hook command from
    ``settings_file``, and the tools ``allow_tools`` allowed; a group, event
    list or ``hooks`` object left empty by that goes too, and the file if
    nothing is left in it."""
    if not settings_file.exists():
        return Edit(settings_file)
    data = _load_json(settings_file)
    changes = _disallow_tools(data)
    hooks = data.get("hooks")
    for event, groups in list(hooks.items() if isinstance(hooks, dict) else ()):
        if not isinstance(groups, list):
            continue
        removed = False
        for group in list(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            kept = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
            if len(kept) == len(inner):
                continue
            removed = True
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
        if removed:
            changes.append(f"{event}: removed the sessions-graph hook")
            if not groups:
                del hooks[event]
    if not changes:
        return Edit(settings_file)
    if hooks == {}:  # emptied by us (the user's own shape stays)
        del data["hooks"]
    return Edit(settings_file, changes, _dump_json(data) if data else None)


def uninstall_hooks(settings_file: Path) -> list[str]:
    """Remove every sessions-graph hook command from ``settings_file`` (see
    ``plan_uninstall_hooks``). Returns what changed (may be [])."""
    edit = plan_uninstall_hooks(settings_file)
    apply_edits([edit])
    return edit.changes


# -- MCP: Claude Code (JSON) ---------------------------------------------------------
def plan_register_mcp_json(config_file: Path, entry: dict[str, Any]) -> Edit:
    """The edit registering our server in ``mcpServers`` of a Claude Code JSON
    file (``~/.claude.json`` or a project's ``.mcp.json``). A same-named entry
    the user changed (other command, an ``env``) is kept."""
    data = _load_json(config_file)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{config_file}: 'mcpServers' is not an object; not touching it")
    current = servers.get(MCP_SERVER_NAME)
    if current == entry:
        return Edit(config_file)
    if current is not None and not _is_replaceable(current, entry):
        return Edit(config_file)
    servers[MCP_SERVER_NAME] = entry
    verb = "updated" if current is not None else "added"
    shown = shlex.join([entry["command"], *entry["args"]])
    return Edit(
        config_file,
        [f"mcpServers.{MCP_SERVER_NAME}: {verb} {shown}"],
        _dump_json(data),
        _mode_for(config_file),
    )


def register_mcp_json(config_file: Path, entry: dict[str, Any]) -> list[str]:
    """Register our server in a Claude Code JSON file (see ``plan_register_mcp_json``)."""
    edit = plan_register_mcp_json(config_file, entry)
    apply_edits([edit])
    return edit.changes


def _is_replaceable(current: Any, entry: dict[str, Any]) -> bool:
    """An entry of ours in the plain shape (another venv): replace it; one the
    user customised, or a server of the same name that is not ours: keep it."""
    if not _is_our_server(current):
        return False
    return not current.get("env") and set(current) <= set(entry)


def plan_unregister_mcp_json(config_file: Path) -> Edit:
    """The edit removing our server from ``mcpServers`` (and ``mcpServers`` if
    that left it empty, and the file if nothing is left in it: Claude Code
    refuses an empty ``.mcp.json``)."""
    if not config_file.exists():
        return Edit(config_file)
    data = _load_json(config_file)
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not _is_our_server(servers.get(MCP_SERVER_NAME)):
        return Edit(config_file)
    del servers[MCP_SERVER_NAME]
    if not servers:
        del data["mcpServers"]
    changes = [f"mcpServers.{MCP_SERVER_NAME}: removed"]
    return Edit(config_file, changes, _dump_json(data) if data else None)


def unregister_mcp_json(config_file: Path) -> list[str]:
    """Remove our server from a Claude Code JSON file (see ``plan_unregister_mcp_json``)."""
    edit = plan_unregister_mcp_json(config_file)
    apply_edits([edit])
    return edit.changes


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


def plan_register_codex_mcp(
    config_file: Path,
    command: str,
    args: list[str],
    env_vars: list[str] | None = None,
    *,
    startup_grace: bool = False,
) -> Edit:
    """The edit adding ``[mcp_servers.sessions-graph]`` with ``command`` /
    ``args`` (and ``env_vars``, the variables Codex passes through: it starts
    MCP servers with a filtered environment, so without them the server would
    not see the settings the hooks see, ``SESSIONS_GRAPH_DB`` and the rest) to
    a Codex ``config.toml`` (with ``startup_grace``, also the grace that lets
    Codex's ``tool_search`` find our tools); a table of ours in the plain shape is
    rewritten, one the user customised (an env, other keys) is kept."""
    text = _read_text(config_file)
    new_text, changes = _codex_table_added(config_file, text, command, args, env_vars)
    if startup_grace:
        new_text, grace = _with_startup_grace(config_file, new_text)
        changes += grace
    return Edit(config_file, changes, new_text if changes else None)


def _codex_table_added(
    config_file: Path, text: str, command: str, args: list[str], env_vars: list[str] | None
) -> tuple[str, list[str]]:
    current = _codex_servers(config_file, text).get(MCP_SERVER_NAME)
    wanted: dict[str, Any] = {"command": command, "args": args}
    if env_vars:
        wanted["env_vars"] = env_vars
    if current == wanted:
        return text, []
    if current is not None and not (_is_our_server(current) and set(current) <= set(wanted)):
        return text, []
    block = (
        f"[mcp_servers.{MCP_SERVER_NAME}]\n"
        f"command = {_toml_string(command)}\n"
        f"args = [{', '.join(_toml_string(a) for a in args)}]\n"
    )
    if env_vars:
        block += "env_vars = [\n" + "".join(f"  {_toml_string(v)},\n" for v in env_vars) + "]\n"
    if current is None:
        if text and not text.endswith("\n"):
            text += "\n"
        new_text = text + ("\n" if text.strip() else "") + block
    else:
        new_text = _replace_codex_table(config_file, text, block)
    parsed = _codex_servers(config_file, new_text).get(MCP_SERVER_NAME)
    if parsed != wanted:  # our edit did not say what we meant: write nothing
        raise ConfigError(
            f"{config_file}: cannot add [mcp_servers.{MCP_SERVER_NAME}] safely; add it by hand"
        )
    verb = "updated" if current is not None else "added"
    changes = [f"[mcp_servers.{MCP_SERVER_NAME}]: {verb} {shlex.join([command, *args])}"]
    return new_text, changes


def register_codex_mcp(
    config_file: Path, command: str, args: list[str], env_vars: list[str] | None = None
) -> list[str]:
    """Register our server in a Codex ``config.toml`` (see ``plan_register_codex_mcp``)."""
    edit = plan_register_codex_mcp(config_file, command, args, env_vars)
    apply_edits([edit])
    return edit.changes


def plan_unregister_codex_mcp(config_file: Path) -> Edit:
    """The edit removing our ``[mcp_servers.sessions-graph]`` table (and its
    sub-tables); the file goes if nothing else was in it."""
    if not config_file.exists():
        return Edit(config_file)
    text = _read_text(config_file)
    new_text, changes = _without_startup_grace(config_file, text)
    current = _codex_servers(config_file, new_text).get(MCP_SERVER_NAME)
    if _is_our_server(current):
        new_text = _replace_codex_table(config_file, new_text, "")
        if MCP_SERVER_NAME in _codex_servers(config_file, new_text):
            raise ConfigError(
                f"{config_file}: cannot remove [mcp_servers.{MCP_SERVER_NAME}] safely;"
                " remove it by hand"
            )
        changes.append(f"[mcp_servers.{MCP_SERVER_NAME}]: removed")
    if not changes:
        return Edit(config_file)
    return Edit(config_file, changes, new_text if new_text.strip() else None)


def unregister_codex_mcp(config_file: Path) -> list[str]:
    """Remove our table from a Codex ``config.toml`` (see ``plan_unregister_codex_mcp``)."""
    edit = plan_unregister_codex_mcp(config_file)
    apply_edits([edit])
    return edit.changes


def _codex_servers(path: Path, text: str) -> dict[str, Any]:
    """The ``mcp_servers`` table of a Codex config; a key of that name holding
    anything but a table is the user's to fix, not ours to overwrite."""
    servers = _parse_toml(path, text).get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: 'mcp_servers' is not a table; not touching it")
    return servers


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
    # Blank lines before the next table are the layout's, whether our table
    # is removed or rewritten (the header, not blank, stops the scan).
    while not lines[end - 1].strip():
        end -= 1
    head = "".join(lines[:start])
    if block == "" and head.endswith("\n\n"):
        head = head[:-1]
    return head + block + "".join(lines[end:])


#: Codex builds the model's ``tool_search`` index when a turn starts, waiting
#: for optional MCP servers only briefly (measured on 0.171: a server ready in
#: 0.6 s is found, one taking 1 s is not); ours starts in 1-3 s (the MCP SDK's
#: imports), so its tools were missing from the search. A grace of a few
#: seconds makes Codex wait for it; a server that fails still fails fast, and
#: one slower than this is left out as before (``required = true`` would also
#: wait, but stops Codex from starting at all when the server cannot start).
CODEX_STARTUP_GRACE_MS = 5000
_CODEX_GRACE_KEY = "mcp_optional_startup_grace_ms"
_CODEX_GRACE_LINES = (
    "# sessions-graph: wait for its MCP server before the first turn, so that"
    " tool_search finds its tools\n"
    f"{_CODEX_GRACE_KEY} = {CODEX_STARTUP_GRACE_MS}\n"
)


def _with_startup_grace(config_file: Path, text: str) -> tuple[str, list[str]]:
    """``text`` with ``mcp_optional_startup_grace_ms`` set at its top, unless
    the user already set it (their value is kept)."""
    before = _parse_toml(config_file, text)
    if _CODEX_GRACE_KEY in before:
        return text, []
    new_text = _CODEX_GRACE_LINES + text  # top-level keys precede every table
    if _parse_toml(config_file, new_text) != {**before, _CODEX_GRACE_KEY: CODEX_STARTUP_GRACE_MS}:
        raise ConfigError(f"{config_file}: cannot add {_CODEX_GRACE_KEY} safely; add it by hand")
    return new_text, [
        f"{_CODEX_GRACE_KEY}: set to {CODEX_STARTUP_GRACE_MS} (waits for our MCP server)"
    ]


def _without_startup_grace(config_file: Path, text: str) -> tuple[str, list[str]]:
    """``text`` without the grace ``_with_startup_grace`` wrote (its two lines
    as written); a value the user set or changed stays."""
    if _CODEX_GRACE_LINES not in text:
        return text, []
    before = _parse_toml(config_file, text)
    new_text = text.replace(_CODEX_GRACE_LINES, "", 1)
    expected = {k: v for k, v in before.items() if k != _CODEX_GRACE_KEY}
    if _parse_toml(config_file, new_text) != expected:
        raise ConfigError(
            f"{config_file}: cannot remove {_CODEX_GRACE_KEY} safely; remove it by hand"
        )
    return new_text, [f"{_CODEX_GRACE_KEY}: removed"]


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
def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else exc
        raise ConfigError(f"cannot read {path}: {reason or exc}") from None


#: Marks a number's source text while a JSON file is in Python's hands
#: (random, so that no string in a user's file can look like one). From
#: ``os.urandom``, as ``secrets.token_hex`` is, without importing ``secrets``
#: (and OpenSSL's hashes through ``hmac``) into ``status``, which reads the
#: install state.
_RAW_NUMBER = f"\x00{os.urandom(8).hex()}:"
_RAW_NUMBER_STRING = re.compile(re.escape(json.dumps(_RAW_NUMBER)[:-1]) + r'([^"\\]*)"')
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Number:
    """A non-integer number as its file wrote it. Read as a float, ``1e400``
    would be written back as ``Infinity`` (not JSON: Node's ``JSON.parse``,
    which Claude Code reads its settings with, refuses it) and ``0.10`` as
    ``0.1``; we write back every value we did not add as it was."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _load_json(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_float=_Number, parse_constant=_Number)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it first") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; not touching it")
    return data


def _dump_json(data: dict[str, Any]) -> str:
    """``data`` as the file's new text: numbers as they were read, and a lone
    UTF-16 surrogate (valid as the escape ``\\ud83d``, not writable as UTF-8)
    as its escape again."""

    def raw(value: Any) -> str:
        if isinstance(value, _Number):
            return _RAW_NUMBER + value.text
        raise TypeError(f"{type(value).__name__} is not JSON")

    text = json.dumps(data, indent=2, ensure_ascii=False, default=raw)
    text = _RAW_NUMBER_STRING.sub(lambda m: m.group(1), text)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _remove(path: Path) -> None:
    """Remove a file uninstalling left with nothing in it (install created it,
    or it was empty)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        _write_error(path, exc)


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
    _atomically(target, text.encode("utf-8"), mode, on_error=lambda exc: _write_error(path, exc))


def _atomically(target: Path, data: bytes, mode: int, on_error: Callable[[OSError], Any]) -> None:
    import tempfile  # only to write: ``status`` reads through this module

    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


def _allow_tools(settings_file: Path, data: dict[str, Any]) -> list[str]:
    """Add our read-only tools to ``permissions.allow`` of a Claude Code
    settings file's ``data``, each once; every other rule stays. Returns what changed."""
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(f"{settings_file}: 'permissions' is not an object; not touching it")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ConfigError(f"{settings_file}: permissions.allow is not a list; not touching it")
    added = [rule for rule in allowed_tool_rules() if rule not in allow]
    if not added:
        if not allow:
            del permissions["allow"]
        if not permissions:
            del data["permissions"]
        return []
    allow.extend(added)
    return [f"permissions.allow: added {', '.join(added)}"]


def _disallow_tools(data: dict[str, Any]) -> list[str]:
    """Remove exactly the rules ``_allow_tools`` adds (a rule of the user's own,
    such as ``mcp__sessions-graph`` for the whole server, stays); an ``allow``
    list or ``permissions`` object left empty goes too. Returns what changed."""
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        return []
    # A list, not a set: the user's list may hold anything JSON does (a
    # number, a list), and membership in a set would need it hashable.
    ours = allowed_tool_rules()
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
    return [f"permissions.allow: removed {', '.join(removed)}"]
