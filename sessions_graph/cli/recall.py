"""``sessions-graph recall`` in the typer application.

The command itself (its options, its output) is ``sessions_graph.recall.command``,
which ``sessions_graph.__main__`` runs before typer loads. Registered here so
that ``sessions-graph --help`` lists it and ``sessions-graph --db PATH recall
...`` reaches it; the arguments go to the same parser.
"""

from __future__ import annotations

import typer

from sessions_graph.recall.command import SUMMARY, main


def register(app: typer.Typer) -> None:
    """Add this module's commands to the application."""
    app.command(
        "recall",
        help=SUMMARY,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )(recall)


def recall(ctx: typer.Context) -> None:
    from sessions_graph.cli import _options

    raise typer.Exit(main(list(ctx.args), db=_options.get("db")))
