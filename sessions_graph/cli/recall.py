"""``sessions-graph recall "QUERY"``: a user's past turns, memories and entities, best first.

Scripts and the MCP server call recall often, so ``sessions_graph.__main__``
dispatches ``sessions-graph recall`` here before typer loads: typer costs
~36 ms to import and then builds a pydantic validator for every option it
parses (~56 ms more), together more than recall's own work. The options are
parsed once, here, with argparse; the typer command registered for
``sessions-graph --help`` (and for ``sessions-graph --db PATH recall ...``)
hands its arguments to the same parser.

Errors are one line on stderr: usage errors exit 2, bad values (a date, a
scope, a limit out of range) and store errors exit 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

PROG = "sessions-graph recall"
SUMMARY = "Recall past turns, memories and entities for a query, best first."


class UsageError(Exception):
    """The command line itself is wrong (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own: usage + message, two lines
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=SUMMARY)
    parser.add_argument("query", metavar="QUERY", help="What to recall, in plain words.")
    parser.add_argument("--user", "-u", help="User id (default: the configured user_id).")
    parser.add_argument(
        "--session", "-s", metavar="ID", help="The asking session: its own turns are left out."
    )
    parser.add_argument("--since", metavar="DATE", help="Only what happened from DATE (ISO 8601).")
    parser.add_argument("--until", metavar="DATE", help="Only what happened before DATE.")
    parser.add_argument(
        "--project", metavar="PATH", help="Only sessions of this project (a directory or key)."
    )
    parser.add_argument(
        "--limit", "-n", type=int, default=10, metavar="N", help="At most N hits (1-100)."
    )
    parser.add_argument(
        "--scope",
        default="all",
        help="all, or a comma-separated list of turns, memories, entities.",
    )
    parser.add_argument("--json", action="store_true", help="Machine-readable output.")
    parser.add_argument(
        "--max-tokens",
        type=_positive,
        default=1500,
        metavar="N",
        help="Budget of the text output, in tokens (default 1500).",
    )
    parser.add_argument("--db", metavar="PATH", help="Embedded database file.")
    return parser


def _scope(text: str) -> str | list[str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return parts[0] if len(parts) == 1 else parts


def _project(text: str | None) -> str | None:
    """A directory given as a path (``.``, ``../app``, ``/src/app``) is the
    absolute cwd the sessions recorded; anything else is a project key."""
    if text is None:
        return None
    if os.sep in text or text in (".", "..") or text.startswith("~"):
        return os.path.abspath(os.path.expanduser(text))
    return text


def recall_text(args: argparse.Namespace, db: str | None) -> str:
    """Run the recall the parsed options ask for; the text to print."""
    from sessions_graph.graph import SessionsGraph

    with SessionsGraph(db=args.db or db) as graph:
        result = graph.recall(
            args.user or graph.settings.user_id,
            args.query,
            limit=args.limit,
            session_id=args.session,
            scope=_scope(args.scope),
            since=args.since,
            until=args.until,
            project=_project(args.project),
        )
        if args.json:
            data = result.to_json()
            if not isinstance(data, str):
                import json

                data = json.dumps(data, indent=2, default=str)
            return data
        return result.render(max_tokens=args.max_tokens)


def main(argv: list[str], db: str | None = None) -> int:
    """``sessions-graph recall ARGS``; the exit code."""
    from sessions_graph.errors import SessionsGraphError

    try:
        args = build_parser().parse_args(argv)
        text = recall_text(args, db)
    except UsageError as exc:
        return _fail(f"{exc} (see {PROG} --help)", 2)
    except SessionsGraphError as exc:
        return _fail(str(exc), 1)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: still one line, never a traceback
        return _fail(f"unexpected {type(exc).__name__}: {exc}", 1)
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _fail(message: str, code: int) -> int:
    # Driver messages can span lines; an error here is always one line.
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    return code


def register(app: typer.Typer) -> None:
    """List ``recall`` in ``sessions-graph --help`` and serve ``--db PATH recall``."""
    import typer

    def recall(ctx: typer.Context) -> None:
        from sessions_graph.cli import _options

        raise typer.Exit(main(list(ctx.args), db=_options.get("db")))

    recall.__doc__ = SUMMARY
    # typer resolves annotations in this module's globals, where typer is not
    # imported (the fast path must not load it): give it the class itself.
    recall.__annotations__ = {"ctx": typer.Context, "return": None}
    app.command(
        "recall",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )(recall)
