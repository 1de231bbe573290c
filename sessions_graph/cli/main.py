"""Run a ``sessions-graph`` command line: parsed without typer when it can be
(``cli.parse``), its help rendered without typer (``cli.help``), else
through the typer application (``cli.app``)."""

from __future__ import annotations

import sys

from sessions_graph.cli.common import guarded, options
from sessions_graph.cli.parse import Defer, Help, parse


def run() -> None:
    """The CLI's entry (after ``__main__``'s own dispatch of ``hook`` and
    ``recall``); exits with the command's code."""
    try:
        func, kwargs, db = parse(sys.argv[1:])
    except Help as asked:
        from sessions_graph.cli.help import render  # argparse's formatter: only for help

        sys.stdout.write(render(asked.words))
        sys.exit(asked.code)
    except Defer:
        from sessions_graph.cli.app import run as run_typer

        sys.exit(run_typer())
    options["db"] = db
    sys.exit(guarded(lambda: func(**kwargs)))
