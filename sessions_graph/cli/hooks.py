"""``sessions-graph install-hooks`` and the ``hook`` command's help.

``sessions-graph hook`` itself is dispatched by ``sessions_graph.__main__``
before this CLI is imported (typer and its imports cost more than the whole
hook budget); the command registered here exists so that it shows in
``--help``, and still works if reached through typer.
"""

from __future__ import annotations

from pathlib import Path

import typer

from sessions_graph.cli import fail
from sessions_graph.hooks.install import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    hook_command,
    install_hooks,
)


def register(app: typer.Typer) -> None:
    app.command(
        "hook",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(hook)
    app.command("install-hooks")(install)


def hook(ctx: typer.Context) -> None:
    """Record one agent hook event (JSON on stdin); installed by install-hooks.

    Always exits 0: failures are logged, and payloads the store cannot take
    are spooled and replayed by the next call.
    """
    from sessions_graph.hooks.runner import main

    raise typer.Exit(main(list(ctx.args)))


_PROJECT = typer.Option(
    None, "--project", help="Install into DIR/.claude/settings.json.", metavar="DIR"
)
_USER = typer.Option(False, "--user", help="Install into ~/.claude/settings.json (the default).")
_CODEX = typer.Option(
    False, "--codex", help="Write Codex's hooks.json (.codex/) instead of Claude Code's."
)


def install(project: Path = _PROJECT, user: bool = _USER, codex: bool = _CODEX) -> None:
    """Make the agent run `sessions-graph hook` on every session event (idempotent)."""
    if project is not None and user:
        raise fail("use either --project DIR or --user, not both", code=2)
    if project is not None and not project.is_dir():
        raise fail(f"--project {project}: not a directory", code=2)
    base = project.resolve() if project is not None else Path.home()
    target = base / (".codex/hooks.json" if codex else ".claude/settings.json")
    command = hook_command()
    changes = install_hooks(target, CODEX_EVENTS if codex else CLAUDE_EVENTS, command)
    if not changes:
        typer.echo(f"{target}: already installed, nothing changed")
        return
    typer.echo(f"{target}:")
    for change in changes:
        typer.echo(f"  {change}")
