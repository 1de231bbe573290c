"""A command's options and arguments, declared without importing typer.

A command function declares its parameters as typer's do
(``limit: int = Option(20, "--limit", "-n", min=1)``), but with these
records: ``cli.parse`` reads them to parse a command line with the standard
library, and ``cli.app`` turns them into typer's ``Option`` and ``Argument``
when it builds the typer application (for ``--help``, and for the messages of
a command line the light parser leaves to typer). Importing typer costs more
than most commands' own work, since typer 0.29 imports pydantic and builds a
validator for each option; see ``cli.parse``.
"""

from __future__ import annotations

from typing import Any


class Param:
    """One option (``decls`` its flags) or argument (no ``decls``) of a command."""

    __slots__ = ("argument", "decls", "default", "help", "max", "metavar", "min", "show_default")

    def __init__(
        self,
        default: Any,
        decls: tuple[str, ...],
        *,
        argument: bool,
        help: str | None = None,
        min: float | None = None,
        max: float | None = None,
        metavar: str | None = None,
        show_default: bool = True,
    ) -> None:
        self.default = default
        self.decls = decls
        self.argument = argument
        self.help = help
        self.min = min
        self.max = max
        self.metavar = metavar
        self.show_default = show_default

    @property
    def required(self) -> bool:
        return self.default is ...

    def typer_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of typer's ``Option`` / ``Argument`` for it."""
        kwargs: dict[str, Any] = {"help": self.help, "metavar": self.metavar}
        if not self.show_default:
            kwargs["show_default"] = False
        if not self.argument:
            kwargs.update(min=self.min, max=self.max)
        return kwargs


def Option(default: Any, *decls: str, **kwargs: Any) -> Any:
    """An option: ``default`` (``...`` when required), its flags, and typer's
    ``help``, ``min``, ``max``, ``metavar``."""
    return Param(default, decls, argument=False, **kwargs)


def Argument(default: Any, **kwargs: Any) -> Any:
    """A positional argument: ``default`` (``...`` when required), typer's
    ``help``, ``metavar``, ``show_default``."""
    return Param(default, (), argument=True, **kwargs)
