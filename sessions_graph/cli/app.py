"""The ``sessions-graph`` command line: the library's façade, one verb a command.

Every command opens the graph through ``open_graph`` (so the engine choice is
the library's own) and every failure the user can cause is one line on stderr
and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from sessions_graph.cli.common import cli_settings, emit_json, missing_store, open_graph, options
from sessions_graph.errors import SessionsGraphError, quiet_driver_logs

app = typer.Typer(
    name="sessions-graph",
    help="Cross-session memory for AI agents, on Memgraph or an embedded SQLite file.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _main(
    db: str = typer.Option(
        None, "--db", help="Embedded database file (overrides SESSIONS_GRAPH_DB).", metavar="PATH"
    ),
) -> None:
    """Cross-session memory for AI agents."""
    options["db"] = db


@app.command()
def setup() -> None:
    """Create the schema (idempotent)."""
    with open_graph() as graph:
        graph.setup()
        info = graph.status()
    typer.echo(f"ready: {info['engine']} at {info['location']} (schema {info['schema_version']})")
    counts = info.get("counts") or {}
    derived, client = counts.get("derived_actions", 0), counts.get("client_actions", 0)
    if derived or client:
        typer.echo(
            f"kept out of recall, injection and extraction: {derived} derived actions"
            f" (our own output), {client} client-context actions"
        )


@app.command()
def status(
    user: str = typer.Option(
        None, "--user", "-u", help="Whose counts (default: the configured user_id)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Which engine and where, the schema version, and the user's counts."""
    settings = cli_settings()
    user_id = user or settings.user_id
    path = missing_store(settings)
    if path:
        info: dict[str, Any] = {
            "engine": "embedded",
            "location": path,
            "exists": False,
            "schema_version": 0,
            "user_id": user_id,
            "counts": {},
        }
    else:
        with open_graph() as graph:
            info = graph.status(user_id=user_id)
            info["health"] = _health(graph, settings, user_id)
    if path:
        info["health"] = _health(None, settings, user_id)
    from sessions_graph.cli.hooks import codex_hooks_status

    codex_hooks = codex_hooks_status()
    if codex_hooks:
        info["codex_hooks"] = codex_hooks
    if as_json:
        emit_json(info)
        return
    typer.echo(f"engine:         {info['engine']}")
    typer.echo(f"location:       {info['location']}")
    if codex_hooks:
        typer.echo(f"codex hooks:    {codex_hooks}")
    if path:
        typer.echo(f"no database at {path}: nothing recorded yet")
        typer.echo("(the first write, or `sessions-graph setup`, creates it)")
    else:
        typer.echo(f"schema version: {info['schema_version']}")
        typer.echo(f"user_id:        {info['user_id']}")
        for name, count in info.get("counts", {}).items():
            typer.echo(f"{name + ':':<15} {count}")
        for row in info.get("interactions", []):
            share = "-" if row["used_share"] is None else f"{row['used_share']:.0%}"
            typer.echo(
                f"interactions:   session {row['session_id']}: {row['interactions']} asked,"
                f" {row['answered']} answered, {row['rated']} rated, used {share}"
                f" of {row['items']} items given"
            )
    from sessions_graph.cli.sessions import health_lines

    for line in health_lines(info["health"]):
        typer.echo(line)


def _health(graph: Any, settings: Any, user_id: str) -> dict[str, Any]:
    """Whether capture works (see ``ui.views.health``)."""
    from sessions_graph.ui.views import health

    return health(graph, settings, user_id)


def _register_commands() -> None:
    from sessions_graph.cli import (
        config,
        history,
        hooks,
        interactions,
        mcp,
        memory,
        memory_files,
        recall,
        reconcile,
        sessions,
    )

    modules = (
        memory,
        config,
        hooks,
        reconcile,
        history,
        recall,
        mcp,
        memory_files,
        sessions,
        interactions,
    )
    for module in modules:
        module.register(app)


_register_commands()


def run() -> None:
    """Run the CLI; errors become one line on stderr and a non-zero exit."""
    quiet_driver_logs()  # typer loads ``logging`` anyway
    try:
        # Not standalone: typer would print a usage error as a boxed panel of
        # five or six lines; it is raised here instead, and made one line.
        code = app(standalone_mode=False)
    except SessionsGraphError as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        _usage_error(exc)  # exits if it is one (typer's own exception types)
        # A bug of ours: still one line, never a traceback.
        typer.echo(f"error: unexpected {type(exc).__name__}: {_one_line(exc)}", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc: Exception) -> None:
    """Exit with one line if ``exc`` is typer's (click's) usage error or abort.

    Matched by shape rather than class: typer raises its vendored copy of
    click's exceptions, older typer versions click's own."""
    kind = type(exc).__name__
    if kind == "NoArgsIsHelpError":  # a bare group: its help, as typer shows it
        ctx = getattr(exc, "ctx", None)
        text = ctx.get_help() if ctx is not None else ""  # rich prints it itself
        if text.strip():
            typer.echo(text)
        sys.exit(2)
    if kind == "Abort":
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    if hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int):
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {_one_line_text(exc.format_message())}{hint}", err=True)
        sys.exit(exc.exit_code or 2)


def _one_line_text(text: str) -> str:
    return " ".join(text.split())


def _one_line(exc: BaseException) -> str:
    # Driver messages can span lines; an error here is always one line.
    return " ".join(str(exc).split())
