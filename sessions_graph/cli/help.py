"""``--help``: the help of the application, a group or a command, rendered
by argparse from the table (``cli.commands``) and the declarations
(``cli.params``) the light parser reads.

Help is not typer's: importing typer alone costs about 5.5 times the
interpreter's start-up, its rich panels another 5 or more, and a command's
own ``--help`` flag goes through a pydantic validator (typer coerces it like
any option), so no help rendered by typer comes near the CLI's goal of 6
times ``python -c pass`` (``bench/bench_cli.py``). Typer's rich markup also
read ``[ui]`` in a docstring as a style tag and printed nothing for it.
argparse, which ``recall --help`` and ``hook --help`` already use, renders
every help the same way. The application's help lists each command by its
table line, so it imports none of the commands' modules; a command's help
imports its own module only (for its docstring and options).
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import Any

from sessions_graph.cli.commands import COMMANDS, GROUPS, Command
from sessions_graph.cli.params import Param

PROG = "sessions-graph"
DESCRIPTION = "Cross-session memory for AI agents, on Memgraph or an embedded SQLite file."
DB_HELP = "Embedded database file (overrides SESSIONS_GRAPH_DB)."


def render(words: tuple[str, ...]) -> str:
    """The help text of the application (``()``), a group or a command."""
    if not words:
        return _listing(
            f"{PROG} [--db PATH] COMMAND [ARGS]...",
            DESCRIPTION,
            [c for c in COMMANDS if len(c.words) == 1]
            + [Command((name,), "", help=text) for name, text in GROUPS.items()],
            db=True,
        )
    if words in {(name,) for name in GROUPS}:
        return _listing(
            f"{PROG} {words[0]} COMMAND [ARGS]...",
            GROUPS[words[0]],
            [c for c in COMMANDS if len(c.words) == 2 and c.words[0] == words[0]],
        )
    [command] = [c for c in COMMANDS if c.words == words]
    return _command_help(command)


def _width() -> int:
    """The width argparse fills its help to (the terminal's, less 2)."""
    return max(shutil.get_terminal_size().columns - 2, 40)


def _paragraphs(text: str) -> str:
    """``text`` (a docstring) as filled paragraphs: its hard line breaks are
    the source's, not the terminal's."""
    blocks = [" ".join(block.split()) for block in text.strip().split("\n\n")]
    return "\n\n".join(textwrap.fill(b, _width()) for b in blocks if b)


def _parser(prog: str, usage: str | None, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog=prog,
        usage=usage,
        description=_paragraphs(description),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )


def _help_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--help", action="store_true", help="Show this message and exit.")


def _listing(usage: str, description: str, commands: list[Command], db: bool = False) -> str:
    """The help of the application or a group: its options, then its
    commands with their table lines."""
    parser = _parser(PROG, usage, description)
    if db:
        parser.add_argument("--db", metavar="PATH", help=DB_HELP)
    _help_flag(parser)
    listed = parser.add_argument_group("commands")
    for command in commands:
        # Each command as an entry argparse lays out as it lays out options:
        # the name in the first column, the help line filled beside it.
        listed.add_argument(command.words[-1], help=_escape(command.help or ""))
    return parser.format_help()


def _command_help(command: Command) -> str:
    from sessions_graph.cli.parse import function, parameters

    func = function(command)
    parser = _parser(" ".join((PROG, *command.words)), None, func.__doc__ or "")
    for name, (param, annotation) in parameters(func).items():
        _declare(parser, name, param, annotation)
    _help_flag(parser)
    return parser.format_help()


def _declare(parser: argparse.ArgumentParser, name: str, param: Param, annotation: str) -> None:
    """``param`` as argparse shows it: the same flags, metavar and help as
    the typer declaration, with its range and default."""
    notes = []
    if param.min is not None or param.max is not None:
        low = "" if param.min is None else f"{param.min:g}<="
        high = "" if param.max is None else f"<={param.max:g}"
        notes.append(f"[{low}x{high}]")
    default = param.default
    if param.show_default and default not in (None, False, ..., [], ()):
        notes.append(f"[default: {default}]")
    text = " ".join(filter(None, [param.help, *notes]))
    kwargs: dict[str, Any] = {"help": _escape(text) or None}
    if param.argument:
        kwargs["metavar"] = param.metavar or name.upper()
        if not param.required:
            kwargs["nargs"] = "*" if annotation.startswith("list") else "?"
        parser.add_argument(name, **kwargs)
    elif annotation == "bool":
        parser.add_argument(*param.decls, dest=name, action="store_true", **kwargs)
    else:
        kwargs["metavar"] = param.metavar or _metavar(annotation)
        parser.add_argument(*param.decls, dest=name, required=param.required, **kwargs)


def _metavar(annotation: str) -> str:
    return {"int": "N", "float": "NUMBER", "Path": "PATH"}.get(annotation, "TEXT")


def _escape(text: str) -> str:
    """``text`` as an argparse help string, which is %-formatted."""
    return text.replace("%", "%%")
