"""``sessions-graph install-hooks`` / ``uninstall-hooks`` and the ``hook``
command's help.

``sessions-graph hook`` itself is dispatched by ``sessions_graph.__main__``
before this CLI is imported (typer and its imports cost more than the whole
hook budget); the command registered here exists so that it shows in
``--help``, and still works if reached through typer.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from sessions_graph.cli.common import fail
from sessions_graph.hooks.install import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    allow_tools,
    check_readable,
    disallow_tools,
    hook_command,
    install_hooks,
    mcp_server_entry,
    register_codex_mcp,
    register_mcp_json,
    uninstall_hooks,
    unregister_codex_mcp,
    unregister_mcp_json,
)


def register(app: typer.Typer) -> None:
    app.command(
        "hook",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(hook)
    app.command("install-hooks")(install)
    app.command("uninstall-hooks")(uninstall)


def hook(ctx: typer.Context) -> None:
    """Record one agent hook event (JSON on stdin); installed by install-hooks.

    Always exits 0: failures are logged, and payloads the store cannot take
    are spooled and replayed by the next call.
    """
    from sessions_graph.hooks.runner import main

    raise typer.Exit(main(list(ctx.args)))


_PROJECT = typer.Option(
    None,
    "--project",
    help="This project only: DIR/.claude/settings.json and DIR/.mcp.json.",
    metavar="DIR",
)
_USER = typer.Option(
    False, "--user", help="Every project: ~/.claude/settings.json and ~/.claude.json (default)."
)
_CODEX = typer.Option(
    False, "--codex", help="Codex (.codex/hooks.json, .codex/config.toml) instead of Claude Code."
)
_NO_MCP = typer.Option(False, "--no-mcp", help="Hooks only: do not register the MCP server.")
_NO_ALLOW_TOOLS = typer.Option(
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


def _report(changes: dict[Path, list[str]], nothing: str) -> None:
    if not any(changes.values()):
        files = ", ".join(str(p) for p in changes)
        typer.echo(f"{files}: {nothing}")
        return
    for path, lines in changes.items():
        if lines:
            typer.echo(f"{path}:")
            for line in lines:
                typer.echo(f"  {line}")


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
        typer.echo(
            "MCP server not registered: the MCP SDK is missing."
            " pip install 'sessions-graph[mcp]', then run install-hooks again",
            err=True,
        )
        no_mcp = True
    for path in (hooks_file,) if no_mcp else (hooks_file, mcp_file):
        check_readable(path)
    events = CODEX_EVENTS if codex else CLAUDE_EVENTS
    changes = {hooks_file: install_hooks(hooks_file, events, hook_command())}
    if not no_mcp and not codex and not no_allow_tools:
        # The same settings file: the model may then call them unasked (and
        # at all in print mode, which refuses a tool nobody allowed).
        changes[hooks_file] += allow_tools(hooks_file)
    if not no_mcp:
        entry = mcp_server_entry()
        if codex:
            changes[mcp_file] = register_codex_mcp(mcp_file, entry["command"], entry["args"])
        else:
            changes[mcp_file] = register_mcp_json(mcp_file, entry)
    _report(changes, "already installed, nothing changed")


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
    for path in (hooks_file, mcp_file):
        check_readable(path)
    changes = {
        hooks_file: uninstall_hooks(hooks_file) + ([] if codex else disallow_tools(hooks_file)),
        mcp_file: unregister_codex_mcp(mcp_file) if codex else unregister_mcp_json(mcp_file),
    }
    _report(changes, "nothing of sessions-graph installed, nothing changed")
