"""What every command shares: the global options, opening the graph the
settings name, output, one-line errors and exits, JSON output.

Free of typer: a command runs without the typer application being built
(see ``cli.parse``), so its output and exits are plain ``print`` and
``Exit``; the typer application, when it runs a command, maps ``Exit`` to
the same exit code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The global options (``--db``), set by the parser or the typer callback.
options: dict[str, Any] = {}


class Exit(Exception):  # an exit, not an error: no "Error" in its name
    """End the command with ``code`` (its output, if any, is printed already)."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.code = code


def echo(text: str = "", err: bool = False) -> None:
    """One line of output, on stdout (or stderr with ``err``)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{text}\n")
    stream.flush()


def fail(message: str, code: int = 1) -> Exit:
    """Print one error line; return the exit to raise."""
    echo(f"error: {message}", err=True)
    return Exit(code)


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
    echo(f"no database at {path}: nothing recorded yet", err=as_json)


@contextmanager
def open_graph(*, read_only: bool = False, settings: Any = None, **overrides: Any) -> Iterator[Any]:
    """The ``SessionsGraph`` the settings (and ``--db``) name, closed
    afterwards; with ``read_only``, None when there is no database yet.
    ``settings``: the command's, already loaded (not read again)."""
    from sessions_graph.graph import SessionsGraph

    if settings is None:
        settings = cli_settings(**overrides)
    if read_only and missing_store(settings):
        yield None
        return
    quiet_driver_logs(settings)
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

        graph = SessionsGraph(db=options.get("db"), **overrides)
        quiet_driver_logs(graph.settings)
        return graph

    return open_


def quiet_driver_logs(settings: Any) -> None:
    """Keep the Bolt driver's log lines off stderr before Memgraph is opened
    (see ``errors.quiet_driver_logs``); the embedded engine loads no ``logging``."""
    if settings.engine_name != "embedded":
        from sessions_graph.errors import quiet_driver_logs as quiet

        quiet()


def guarded(
    command: Callable[[], Any], unexpected: Callable[[Exception], None] | None = None
) -> int:
    """Run ``command``; its exit code. What fails is one line on stderr, never
    a traceback: the package's own errors exit 1, Ctrl-C 130; ``unexpected``
    may exit first for another exception (typer's usage errors)."""
    from sessions_graph.errors import SessionsGraphError

    try:
        code = command()
    except Exit as exc:
        return exc.code
    except SessionsGraphError as exc:
        echo(f"error: {one_line(str(exc))}", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if unexpected is not None:
            unexpected(exc)
        # A bug of ours: still one line, never a traceback.
        echo(f"error: unexpected {type(exc).__name__}: {one_line(str(exc))}", err=True)
        return 1
    return code if isinstance(code, int) else 0


def one_line(text: str) -> str:
    """``text`` on one line (driver messages can span several)."""
    return " ".join(text.split())


def owned_session(graph: Any, session_id: str, user_id: str) -> dict[str, Any]:
    """The session (a plain record) if it belongs to ``user_id``; otherwise the
    command fails as if it did not exist, so the CLI never shows one user's
    session to another."""
    session = graph.get_session(session_id, plain=True)
    if session is None or session["user_id"] != user_id:
        raise fail(f"session {session_id} not found for user {user_id}")
    return session


def emit_json(data: Any) -> None:
    echo(json.dumps(data, indent=2, default=str))


def project_arg(text: str | None) -> str | None:
    """A ``--project`` value: a directory given as a path (``.``, ``../app``,
    ``/src/app``, ``~/src/app``) is the absolute directory the sessions ran
    in; anything else is a project key."""
    import os

    if text is None:
        return None
    if os.sep in text or text in (".", "..") or text.startswith("~"):
        return os.path.abspath(os.path.expanduser(text))
    return text
