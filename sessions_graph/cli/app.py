"""The typer application: shell completion, and every command line the
light parser (``cli.parse``) leaves to typer (a usage error, a value out of
range), with typer's own messages. Help is ``cli.help``'s.

It is built from the same table (``cli.commands``) and declarations
(``cli.params``) the light parser reads, so both know the same commands and
options; it is only built when needed, since building it costs 15-20 times
the interpreter's start-up (typer imports pydantic, and makes a validator
for every option it coerces).
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any

import typer

from sessions_graph.cli.commands import COMMANDS, GROUPS, Command
from sessions_graph.cli.common import echo, guarded, one_line, options
from sessions_graph.cli.help import DB_HELP, DESCRIPTION
from sessions_graph.cli.params import Param
from sessions_graph.cli.parse import Defer, find, function


def _main(
    db: str = typer.Option(None, "--db", help=DB_HELP, metavar="PATH"),
) -> None:
    """Cross-session memory for AI agents."""
    options["db"] = db


def build(commands: tuple[Command, ...] = COMMANDS) -> typer.Typer:
    """The typer application with ``commands`` (every command by default).

    A command line that names a command (one the light parser left to typer
    for its message) needs that command only: building the others would
    import their modules, and typer would make a validator for each of their
    options, for nothing."""
    app = typer.Typer(
        name="sessions-graph",
        help=DESCRIPTION,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    app.callback()(_main)
    groups = {
        name: typer.Typer(help=text, no_args_is_help=True)
        for name, text in GROUPS.items()
        if any(c.words[0] == name for c in commands)
    }
    for command in commands:
        parent = groups[command.words[0]] if len(command.words) > 1 else app
        func = function(command)
        if command.passthrough:
            parent.command(
                command.words[-1],
                help=command.help,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                add_help_option=not command.own_help,
            )(_passthrough(func))
        else:
            parent.command(command.words[-1])(_typer_function(func))
    for name, group in groups.items():
        app.add_typer(group, name=name)
    return app


def _typer_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as typer reads a command: its ``Param`` defaults as typer's
    ``Option`` and ``Argument``, its annotations evaluated."""
    hints = typing.get_type_hints(func)
    signature = inspect.signature(func)
    parameters = []
    for p in signature.parameters.values():
        param: Param = p.default
        make = typer.Argument if param.argument else typer.Option
        info = make(param.default, *param.decls, **param.typer_kwargs())
        parameters.append(p.replace(default=info, annotation=hints[p.name]))

    def command(**kwargs: Any) -> Any:
        return func(**kwargs)

    command.__name__, command.__doc__ = func.__name__, func.__doc__
    command.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


def _passthrough(func: Callable[[list[str]], Any]) -> Callable[..., Any]:
    """A command that parses its own arguments: typer hands it the rest."""

    def command(ctx: typer.Context) -> Any:
        return func(list(ctx.args))

    command.__name__, command.__doc__ = func.__name__, func.__doc__
    return command


def run() -> int:
    """Run the command line through typer; the exit code."""
    from sessions_graph.errors import quiet_driver_logs

    quiet_driver_logs()  # typer loads ``logging`` anyway
    # Not standalone: typer would print a usage error as a boxed panel of
    # five or six lines; it is raised here instead, and made one line.
    app = build(_invoked(sys.argv[1:]))
    return guarded(lambda: app(standalone_mode=False), _usage_error)


def _invoked(argv: list[str]) -> tuple[Command, ...]:
    """The one command ``argv`` names (after the global ``--db``), else all."""
    rest = list(argv)
    while rest[:1] == ["--db"] and len(rest) > 1:
        rest = rest[2:]
    while rest[:1] and rest[0].startswith("--db="):
        rest = rest[1:]
    try:
        command, _ = find(rest)
    except Defer:
        return COMMANDS
    return (command,)


def _usage_error(exc: Exception) -> None:
    """Exit with one line if ``exc`` is typer's (click's) usage error or abort.

    Matched by shape rather than class: typer raises its vendored copy of
    click's exceptions, older typer versions click's own. (A bare group,
    typer's ``NoArgsIsHelpError``, never reaches typer: ``cli.parse`` prints
    its help.)"""
    kind = type(exc).__name__
    if kind == "Abort":
        echo("error: aborted", err=True)
        sys.exit(1)
    if hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int):
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        echo(f"error: {one_line(exc.format_message())}{hint}", err=True)
        sys.exit(exc.exit_code or 2)
