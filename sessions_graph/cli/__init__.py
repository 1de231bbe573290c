"""The ``sessions-graph`` command line: the library's façade, one verb a command.

Every command opens the graph through ``open_graph`` (so the engine choice is
the library's own) and every failure the user can cause is one line on stderr
and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from sessions_graph.errors import SessionsGraphError

app = typer.Typer(
    name="sessions-graph",
    help="Cross-session memory for AI agents, on Memgraph or an embedded SQLite file.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_options: dict[str, Any] = {}


@app.callback()
def _main(
    db: str = typer.Option(
        None, "--db", help="Embedded database file (overrides SESSIONS_GRAPH_DB).", metavar="PATH"
    ),
) -> None:
    """Cross-session memory for AI agents."""
    _options["db"] = db


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print one error line; return the exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def open_graph(**overrides: Any) -> Iterator[Any]:
    """The ``SessionsGraph`` the settings (and ``--db``) name, closed afterwards."""
    from sessions_graph.graph import SessionsGraph

    graph = SessionsGraph(db=_options.get("db"), **overrides)
    try:
        yield graph
    finally:
        graph.close()


def graph_factory(**overrides: Any) -> Any:
    """A function that opens the ``SessionsGraph`` the settings (and ``--db``)
    name, for commands that open it later (a server opens it on first use)."""

    def open_() -> Any:
        from sessions_graph.graph import SessionsGraph

        return SessionsGraph(db=_options.get("db"), **overrides)

    return open_


def owned_session(graph: Any, session_id: str, user_id: str) -> Any:
    """The session if it belongs to ``user_id``; otherwise the command fails as
    if it did not exist, so the CLI never shows one user's session to another."""
    session = graph.get_session(session_id)
    if session is None or session.user_id != user_id:
        raise fail(f"session {session_id} not found for user {user_id}")
    return session


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@app.command()
def setup() -> None:
    """Create the schema (idempotent)."""
    with open_graph() as graph:
        graph.setup()
        info = graph.status()
    typer.echo(f"ready: {info['engine']} at {info['location']} (schema {info['schema_version']})")


@app.command()
def status(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Which engine and where, the schema version and counts."""
    with open_graph() as graph:
        info = graph.status()
        info["user_id"] = graph.settings.user_id
    if as_json:
        emit_json(info)
        return
    typer.echo(f"engine:         {info['engine']}")
    typer.echo(f"location:       {info['location']}")
    typer.echo(f"schema version: {info['schema_version']}")
    typer.echo(f"user_id:        {info['user_id']}")
    for name, count in info.get("counts", {}).items():
        typer.echo(f"{name + ':':<15} {count}")


def _register_commands() -> None:
    from sessions_graph.cli import (
        config,
        history,
        hooks,
        mcp,
        memory,
        memory_files,
        recall,
        reconcile,
    )

    for module in (memory, config, hooks, reconcile, history, recall, mcp, memory_files):
        module.register(app)


_register_commands()


def run() -> None:
    """Run the CLI; errors become one line on stderr and a non-zero exit."""
    try:
        app()  # standalone: usage errors print their own short message, exit 2
    except SessionsGraphError as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        typer.echo(f"error: unexpected {type(exc).__name__}: {_one_line(exc)}", err=True)
        sys.exit(1)


def _one_line(exc: BaseException) -> str:
    # Driver messages can span lines; an error here is always one line.
    return " ".join(str(exc).split())
