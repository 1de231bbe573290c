"""Parse a command line without typer, or leave it to typer.

Typer 0.29 imports pydantic and, building the application, makes a pydantic
validator for every option of every command: 130-170 ms of CPU before any
command runs, 15-20 times the interpreter's own start-up, for commands that
then take a few milliseconds. So a command line is first parsed here, with
argparse from the same declarations (``cli.params``) the typer application
is built from, importing only the invoked command's module.

This parser only ever accepts, or asks for help (``--help``, or no command
where one should be: ``Help``, rendered by ``cli.help``): whatever else it
does not accept as it stands (a usage error, a value out of range, an unknown
command, shell completion, a parameter type it does not know) raises
``Defer``, and the typer application handles the command line, with typer's
messages. So typer stays the reference for what a command line means, and
this is a fast path that agrees with it on every command line it takes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.cli import fixed_width_formatter
from sessions_graph.cli.commands import COMMANDS, GROUPS, Command
from sessions_graph.cli.params import Param

if TYPE_CHECKING:
    import argparse


class Defer(Exception):
    """The typer application should handle this command line."""


class Help(Exception):
    """Print the help of ``words`` (a group or command, ``()`` the
    application's; see ``cli.help``) and exit with ``code``: 0 when asked
    for, 2 when the command line stopped short of a command (as a bare
    ``sessions-graph``)."""

    def __init__(self, words: tuple[str, ...] = (), code: int = 0) -> None:
        super().__init__(words, code)
        self.words = words
        self.code = code


def _integer(text: str) -> int:
    # Plain digits only: any other spelling typer may read differently.
    if not re.fullmatch(r"-?[0-9]+", text):
        raise ValueError(text)
    return int(text)


def _number(text: str) -> float:
    if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text):
        raise ValueError(text)
    return float(text)


#: The annotations a command may use, as written (``from __future__ import
#: annotations`` keeps them strings), and how a value of each is read.
_TYPES: dict[str, Callable[[str], Any]] = {
    "str": str,
    "int": _integer,
    "float": _number,
    "Path": Path,
}


def find(words: list[str]) -> tuple[Command, int]:
    """The command ``words`` start with, and how many words name it."""
    for command in COMMANDS:
        n = len(command.words)
        if tuple(words[:n]) == command.words:
            return command, n
    raise Defer  # no command, a bare group, an unknown word


def function(command: Command) -> Callable[..., Any]:
    """The command's function (importing its module only)."""
    module, name = command.target.split(":")
    return getattr(import_module(f"sessions_graph.cli.{module}"), name)  # type: ignore[no-any-return]


def parameters(func: Callable[..., Any]) -> dict[str, tuple[Param, str]]:
    """Each parameter of a command function: its declaration and annotation.

    Read from the function's code and defaults rather than ``inspect``,
    whose import alone costs more than a short command's work."""
    code = func.__code__  # type: ignore[attr-defined]
    names = code.co_varnames[: code.co_argcount]
    defaults = func.__defaults__ or ()  # type: ignore[attr-defined]
    if len(defaults) != len(names) or code.co_kwonlyargcount:
        raise Defer
    annotations = func.__annotations__
    return {n: (d, annotations.get(n, "")) for n, d in zip(names, defaults, strict=True)}


def parse(argv: list[str]) -> tuple[Callable[..., Any], dict[str, Any], str | None]:
    """(the command's function, its arguments, the global ``--db``) for
    ``argv``; ``Help`` when it asks for help (or names no command), else
    ``Defer``."""
    if "_SESSIONS_GRAPH_COMPLETE" in os.environ:
        raise Defer  # shell completion is typer's
    db, rest = _global_options(argv)
    _help(rest)
    command, n = find(rest)
    func, rest = function(command), rest[n:]
    if command.passthrough:
        return func, {"args": rest}, db
    return func, _arguments(func, rest), db


def _help(words: list[str]) -> None:
    """Raise ``Help`` if ``words`` (after the global options) ask for help:
    ``--help`` after a command or group (before any ``--``), or a group or
    nothing at all where a command should be, as typer did."""
    if not words:
        raise Help((), code=2)
    group = words[0] in GROUPS
    try:
        command, n = find(words)
    except Defer:
        if not group:
            raise  # an unknown command: typer says so
        if len(words) == 1:
            raise Help((words[0],), code=2) from None
        if words[1] == "--help":
            raise Help((words[0],)) from None
        raise
    if command.own_help:
        return  # the command prints its own help
    asked = words[n:]
    if "--" in asked:
        asked = asked[: asked.index("--")]
    if "--help" in asked:
        raise Help(command.words)


def _global_options(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--db PATH`` (the application's one option) and the words after it;
    ``Help`` for ``--help`` among them."""
    db = None
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag.startswith("--db="):
            db = flag.removeprefix("--db=")
        elif flag == "--db" and rest:
            db = rest.pop(0)
        elif flag == "--help":
            raise Help(())
        else:
            raise Defer
    return db, rest


def _arguments(func: Callable[..., Any], words: list[str]) -> dict[str, Any]:
    parser = _parser()
    for name, (param, annotation) in parameters(func).items():
        if not isinstance(param, Param):
            raise Defer
        _add(parser, name, param, annotation)
    values = vars(parser.parse_args(words))
    for name, (param, _) in parameters(func).items():
        value = values[name]
        low, high = param.min, param.max
        if value is not None and (
            (low is not None and value < low) or (high is not None and value > high)
        ):
            raise Defer  # typer says what the range is
    return values


def _parser() -> argparse.ArgumentParser:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> Any:
            raise Defer(message)

    # This parser prints no help (``cli.help`` does): a fixed width will do.
    return Parser(add_help=False, allow_abbrev=False, formatter_class=fixed_width_formatter)


def _add(parser: argparse.ArgumentParser, name: str, param: Param, annotation: str) -> None:
    """Declare ``param`` to argparse as typer declares it to click."""
    if annotation == "bool" and not param.argument and param.default is False:
        parser.add_argument(*param.decls, dest=name, action="store_true")
        return
    if annotation == "list[str]" and param.argument:
        parser.add_argument(name, nargs="*", default=param.default)
        return
    kind = _TYPES.get(annotation)
    if kind is None:
        raise Defer
    if param.argument:
        nargs = None if param.required else "?"
        default = None if param.required else param.default
        parser.add_argument(name, type=kind, nargs=nargs, default=default)
    else:
        default = None if param.required else param.default
        parser.add_argument(
            *param.decls, dest=name, type=kind, default=default, required=param.required
        )
