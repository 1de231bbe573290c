"""``sessions-graph recall "QUERY"``: a user's past turns, memories and entities, best first.

Scripts and the MCP server call recall often, so ``sessions_graph.__main__``
dispatches ``sessions-graph recall`` here before anything else of the CLI
loads. This module imports nothing heavier than argparse. The options are
parsed once, here; ``command`` (listed by ``sessions-graph --help``, reached
by ``sessions-graph --db PATH recall``) hands its arguments to the same
parser.

Errors are one line on stderr: usage errors exit 2, bad values (a date, a
scope, a limit out of range) and store errors exit 1.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from sessions_graph.cli import fixed_width_formatter

if TYPE_CHECKING:
    import argparse

PROG = "sessions-graph recall"
SUMMARY = "Recall past turns, memories and entities for a question, best first."


class UsageError(Exception):
    """The command line itself is wrong (exit 2)."""


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:  # argparse's own prints usage: two lines
            raise UsageError(message)

        def print_help(self, file: Any = None) -> None:
            # Help (the only text this parser prints) fits the terminal.
            self.formatter_class = argparse.HelpFormatter
            super().print_help(file)

    # The terminal's width only for help (``print_help``).
    parser = Parser(prog=PROG, description=SUMMARY, formatter_class=fixed_width_formatter)
    parser.add_argument("query", metavar="QUERY", help="What to recall, in plain words.")
    parser.add_argument("--user", "-u", help="User id (default: the configured user_id).")
    parser.add_argument(
        "--session",
        "-s",
        metavar="ID",
        help="The asking session: its own turns are left out, its interactions come first,"
        " and the recall is recorded as one of them (`sessions-graph feedback last SCORE`).",
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
        default="auto",
        help="auto (all, with the asking session's interactions first), all, or a"
        " comma-separated list of turns, memories, entities, session (the asking"
        " session's own turns, left out otherwise), interactions.",
    )
    parser.add_argument("--json", action="store_true", help="Machine-readable output.")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=1500,
        metavar="N",
        help="Budget of the text output, in tokens (default 1500).",
    )
    parser.add_argument("--db", metavar="PATH", help="Embedded database file.")
    return parser


def _scope(text: str) -> str | list[str]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    return parts[0] if len(parts) == 1 else parts


def recall_text(args: argparse.Namespace, db: str | None) -> str:
    """Run the recall the parsed options ask for; the text to print.

    It calls the recall layer (plain records) rather than
    ``SessionsGraph.recall``, whose pydantic result would add pydantic's import
    to every call; the output is the same (``RecallResult.render`` and
    ``to_json`` are these functions over the same records).
    """
    from sessions_graph.cli.common import project_arg
    from sessions_graph.errors import quiet_driver_logs
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.recall.core import recall
    from sessions_graph.recall.render import render
    from sessions_graph.recall.request import check_request
    from sessions_graph.settings import load_settings

    settings = load_settings(db=args.db or db)
    user_id = args.user or settings.user_id
    options = {
        "limit": args.limit,
        "session_id": args.session,
        "scope": _scope(args.scope),
        "since": args.since,
        "until": args.until,
        "project": project_arg(args.project),
    }
    missing = _missing_store(settings)
    if missing:
        # Recall only reads: a mistyped --db must not leave an empty database
        # (and its directories) behind. The request is still checked.
        request = check_request(user_id, args.query, **options)
        result = {"user_id": request.user_id, "query": request.query, "hits": []}
        note = f"no database at {missing}: nothing recorded yet"
        if not args.json:
            return note
        sys.stderr.write(note + "\n")
    else:
        if settings.engine_name != "embedded":
            quiet_driver_logs()
        with SessionsGraph(settings=settings) as graph:
            result = recall(
                graph.engine,
                user_id,
                args.query,
                feedback_influence=settings.feedback_influence,
                **options,
            )
            if args.session is not None:
                result["interaction_id"] = graph.record_interaction(
                    user_id, args.session, args.query, result["hits"], source="recall"
                )
    if args.json:
        from sessions_graph.recall import to_json

        return to_json(result)
    return render(result["hits"], args.max_tokens, result["query"])


def _missing_store(settings: Any) -> str | None:
    """The embedded database's path when there is no file there yet."""
    if settings.engine_name != "embedded":
        return None
    path = os.path.expanduser(str(settings.db))
    return None if os.path.exists(path) else path


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


def command(args: list[str]) -> None:
    """``sessions-graph [--db PATH] recall ARGS`` reached through the CLI's
    parser rather than ``__main__``: the same ``main``, with ``--db``."""
    from sessions_graph.cli.common import Exit, options

    raise Exit(main(args, db=options.get("db")))
