"""``sessions-graph install-hooks`` / ``uninstall-hooks`` and the ``hook``
command's help.

``sessions-graph hook`` itself is dispatched by ``sessions_graph.__main__``
before the rest of the CLI is imported (this module's imports alone cost
more than the hook's budget); the ``hook`` command here exists so that it
shows in ``--help``, and still works after ``--db PATH``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

from sessions_graph.cli.common import Exit, echo, fail
from sessions_graph.cli.params import Option
from sessions_graph.extras import pip_install, pipx_install
from sessions_graph.hooks.install import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    PORTABLE_EXECUTABLE,
    Edit,
    apply_edits,
    config_files,
    hook_command,
    mcp_server_entry,
    plan_install_hooks,
    plan_register_codex_mcp,
    plan_register_mcp_json,
    plan_uninstall_hooks,
    plan_unregister_codex_mcp,
    plan_unregister_mcp_json,
)


def hook(args: list[str]) -> None:
    """Record one agent hook event (JSON on stdin); installed by install-hooks.

    Always exits 0: failures are logged, and payloads the store cannot take
    are spooled and replayed by the next call.
    """
    from sessions_graph.hooks.runner import main

    raise Exit(main(args))


_PROJECT = Option(
    None,
    "--project",
    help="This project only: DIR/.claude/settings.json and DIR/.mcp.json.",
    metavar="DIR",
)
_USER = Option(
    False, "--user", help="Every project: ~/.claude/settings.json and ~/.claude.json (default)."
)
_CODEX = Option(
    False, "--codex", help="Codex (.codex/hooks.json, .codex/config.toml) instead of Claude Code."
)
_NO_MCP = Option(False, "--no-mcp", help="Hooks only: do not register the MCP server.")
_NO_ALLOW_TOOLS = Option(
    False,
    "--no-allow-tools",
    help="Claude Code: do not add the MCP server's read-only tools (recall, search_memories,"
    " list_sessions, get_session, session_entities) to permissions.allow.",
)


def _targets(project: Path | None, user: bool, codex: bool) -> tuple[Path, Path]:
    """(hook settings file, MCP settings file) for the chosen agent and scope."""
    if project is not None and user:
        raise fail("use either --project DIR or --user, not both", code=2)
    if project is not None and not project.is_dir():
        raise fail(f"--project {project}: not a directory", code=2)
    return config_files(project, codex)


def _report(edits: list[Edit], nothing: str) -> None:
    if not any(edit.changes for edit in edits):
        files = ", ".join(str(edit.path) for edit in edits)
        echo(f"{files}: {nothing}")
        return
    for edit in edits:
        if edit.changes:
            echo(f"{edit.path}:")
            for line in edit.changes:
                echo(f"  {line}")


def install(
    project: Path = _PROJECT,
    user: bool = _USER,
    codex: bool = _CODEX,
    no_mcp: bool = _NO_MCP,
    no_allow_tools: bool = _NO_ALLOW_TOOLS,
) -> None:
    """Run `sessions-graph hook` on every session event, register the
    `sessions-graph mcp` server and (Claude Code) allow its read-only tools
    (idempotent)."""
    hooks_file, mcp_file = _targets(project, user, codex)
    if not no_mcp and not _mcp_installed():
        # A registered server that cannot start shows as failed in the agent
        # on every session: register it once the SDK is there.
        echo(
            "MCP server not registered: the MCP SDK is missing."
            f" {pip_install('mcp')}, then run install-hooks again",
            err=True,
        )
        no_mcp = True
    # A project's files are committed: they run sessions-graph by name.
    portable = project is not None
    events = CODEX_EVENTS if codex else CLAUDE_EVENTS
    # Every file's new content is worked out before any is written, and they
    # are written together: install is all or nothing.
    # Our read-only tools are allowed in the hooks' own settings file (Claude
    # Code only, and only where our server is installed).
    allow = not (no_mcp or codex or no_allow_tools)
    edits = [plan_install_hooks(hooks_file, events, hook_command(portable), allow_tools=allow)]
    if not no_mcp:
        entry = mcp_server_entry(portable)
        if codex:
            from sessions_graph.settings import environment_names

            edits.append(
                plan_register_codex_mcp(
                    mcp_file,
                    entry["command"],
                    entry["args"],
                    environment_names(llm_keys=False),
                    startup_grace=True,
                )
            )
        else:
            edits.append(plan_register_mcp_json(mcp_file, entry))
    apply_edits(edits)
    _report(edits, "already installed, nothing changed")
    if portable and shutil.which(PORTABLE_EXECUTABLE) is None:
        echo(
            f"note: {PORTABLE_EXECUTABLE} is not on this PATH; the project's files run it by"
            " name (this machine's path would not work for a teammate): put it on PATH,"
            f" e.g. {pipx_install()}",
            err=True,
        )
    if codex:
        _trust_codex_hooks(hooks_file, project)


def _trust_codex_hooks(hooks_file: Path, project: Path | None) -> None:
    """Codex runs a hook only once the user trusted it, silently skipping it
    until then: trust ours through Codex itself, or say what to do."""
    from sessions_graph.hooks.codex_trust import MANUAL_STEP, CodexTrustError, trust_our_hooks

    cwd = project.resolve() if project is not None else Path.home()
    try:
        trusted = trust_our_hooks(hooks_file, cwd)
    except CodexTrustError as exc:
        echo(
            f"Codex runs hooks only once you trust them, and ours could not be trusted"
            f" for you ({exc}): {MANUAL_STEP}",
            err=True,
        )
        return
    if trusted:
        echo(
            f"Codex: trusted our {len(trusted)} hooks in {hooks_file} (Codex runs a hook"
            " only once trusted, and asks again if it changes)"
        )


def _mcp_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):  # a module entry of None, as when blocked
        return False


def uninstall(project: Path = _PROJECT, user: bool = _USER, codex: bool = _CODEX) -> None:
    """Remove what install-hooks added: our hook commands, our MCP server and
    the permission rules that allowed its read-only tools."""
    hooks_file, mcp_file = _targets(project, user, codex)
    edits = [
        plan_uninstall_hooks(hooks_file),
        plan_unregister_codex_mcp(mcp_file) if codex else plan_unregister_mcp_json(mcp_file),
    ]
    apply_edits(edits)
    if project is not None:
        # The project's .claude/ (or .codex/) directory install created, if
        # removing our file left it empty.
        for edit in edits:
            if edit.changes and edit.text is None and edit.path.parent != project.resolve():
                with contextlib.suppress(OSError):
                    edit.path.parent.rmdir()
    _report(edits, "nothing of sessions-graph installed, nothing changed")


def codex_hooks_status() -> str | None:
    """One line on our Codex hooks at user scope, for ``status``: None when
    none is installed (Codex is not asked, so no cost for others)."""
    from sessions_graph.hooks.install import is_ours

    hooks_file, _ = _targets(None, False, True)
    try:
        groups = json.loads(hooks_file.read_text(encoding="utf-8")).get("hooks", {})
        installed = any(
            is_ours(h.get("command"))
            for gs in groups.values()
            for g in gs
            for h in g.get("hooks", [])
        )
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    if not installed:
        return None
    # Only now: reading Codex's trust starts its app server (threads, a subprocess).
    from sessions_graph.hooks.codex_trust import MANUAL_STEP, CodexTrustError, our_hooks

    try:
        hooks = our_hooks(hooks_file, Path.home())
    except CodexTrustError as exc:
        return f"installed in {hooks_file}; their trust could not be read ({exc})"
    untrusted = [h for h in hooks if h.trust not in ("trusted", "managed")]
    if not untrusted:
        return f"installed in {hooks_file} and trusted"
    events = ", ".join(sorted(h.event for h in untrusted))
    return (
        f"installed in {hooks_file} but NOT trusted ({events}): Codex skips them."
        f" Run `sessions-graph install-hooks --codex`, or {MANUAL_STEP}"
    )
