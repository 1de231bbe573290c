"""The ``sessions-graph`` command line.

``main`` runs a command line: ``parse`` reads it without typer (from the
table in ``commands`` and the declarations of ``params``) and imports only
the invoked command's module; ``app`` builds the typer application for
``--help`` and for what ``parse`` leaves to it. ``recall`` holds the
``recall`` command, which ``sessions_graph.__main__`` runs before any of
this, as it runs the hook.
"""

from __future__ import annotations

from typing import Any


def fixed_width_formatter(prog: str) -> Any:
    """argparse's help formatter at a fixed width, for a parser while it only
    parses: argparse makes a formatter for every argument declared (to check
    its metavar), and one without a width imports shutil (and bz2, lzma,
    fnmatch) to ask the terminal for it."""
    import argparse

    return argparse.HelpFormatter(prog, width=80)
