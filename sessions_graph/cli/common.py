"""What every command shares: the global options, opening the graph the
settings name, one-line errors, JSON output.

Apart from ``app`` so that the command modules import it, and ``app``
imports the command modules, without a circle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

#: The global options (``--db``), set by the application's callback.
options: dict[str, Any] = {}


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print one error line; return the exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def db_option() -> str | None:
    """The global ``--db PATH``, if given."""
    return options.get("db")  # type: ignore[no-any-return]


def cli_settings(**overrides: Any) -> Any:
    """The settings, with ``--db`` applied."""
    from sessions_graph.settings import load_settings

    return load_settings(db=options.get("db"), **overrides)


def missing_store(settings: Any) -> str | None:
    """The embedded database's path if it does not exist yet, else None: a
    command that only reads says nothing is stored, rather than creating an
    empty database (and its directories) where ``--db`` may have been a typo."""
    if settings.engine_name != "embedded":
        return None
    path = Path(settings.db).expanduser()
    return None if path.exists() else str(path)


def say_nothing_stored(as_json: bool, empty: Any) -> None:
    """What a read command prints when there is no database yet (``open_graph``
    with ``read_only`` gave None): ``empty`` as JSON, or the reason."""
    if as_json:
        emit_json(empty)
    path = missing_store(cli_settings())
    typer.echo(f"no database at {path}: nothing recorded yet", err=as_json)


@contextmanager
def open_graph(*, read_only: bool = False, **overrides: Any) -> Iterator[Any]:
    """The ``SessionsGraph`` the settings (and ``--db``) name, closed
    afterwards; with ``read_only``, None when there is no database yet."""
    from sessions_graph.graph import SessionsGraph

    settings = cli_settings(**overrides)
    if read_only and missing_store(settings):
        yield None
        return
    graph = SessionsGraph(settings=settings)
    try:
        yield graph
    finally:
        graph.close()


def graph_factory(**overrides: Any) -> Any:
    """A function that opens the ``SessionsGraph`` the settings (and ``--db``)
    name, for commands that open it later (a server opens it on first use)."""

    def open_() -> Any:
        from sessions_graph.graph import SessionsGraph

        return SessionsGraph(db=options.get("db"), **overrides)

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
