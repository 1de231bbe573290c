"""Every ``sessions-graph`` command: its words and where its function lives.

One table for both ways a command line is handled: ``cli.parse`` imports
only the invoked command's module, and ``cli.app`` builds the typer
application from all of them, in this order (the order ``--help`` lists).
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """One command: ``words`` as typed, ``target`` as ``module:function``
    under ``sessions_graph.cli``."""

    words: tuple[str, ...]
    target: str
    #: The function takes the rest of the command line as one list and parses
    #: it itself (``hook`` and ``recall``, which ``__main__`` runs before any
    #: of this when they come first).
    passthrough: bool = False
    #: ``--help`` is the command's own (``recall`` prints its argparse help).
    own_help: bool = False
    #: The help line, when not the function's docstring.
    help: str | None = None


#: Groups of subcommands, with the help line of each.
GROUPS = {
    "memory": "Save, list, search, update and delete memories.",
    "config": "Read and write settings (config file < environment).",
}

COMMANDS = (
    Command(("setup",), "status:setup"),
    Command(("status",), "status:status"),
    Command(("memory", "add"), "memory:add"),
    Command(("memory", "list"), "memory:list_"),
    Command(("memory", "search"), "memory:search"),
    Command(("memory", "update"), "memory:update"),
    Command(("memory", "delete"), "memory:delete"),
    Command(("config", "get"), "config:get"),
    Command(("config", "set"), "config:set_"),
    Command(("config", "unset"), "config:unset"),
    Command(("config", "list"), "config:list_"),
    Command(("config", "path"), "config:path"),
    Command(("hook",), "hooks:hook", passthrough=True),
    Command(("install-hooks",), "hooks:install"),
    Command(("uninstall-hooks",), "hooks:uninstall"),
    Command(("reconcile",), "reconcile:reconcile"),
    Command(("entities",), "reconcile:entities"),
    Command(("forget",), "reconcile:forget"),
    Command(("demo",), "reconcile:demo"),
    Command(("import",), "history:import_"),
    Command(
        ("recall",),
        "recall:command",
        passthrough=True,
        own_help=True,
        help="Recall past turns, memories and entities for a question, best first.",
    ),
    Command(("mcp",), "mcp:mcp"),
    Command(("memory", "files"), "memory_files:files"),
    Command(("memory", "versions"), "memory_files:versions"),
    Command(("sessions",), "sessions:sessions"),
    Command(("show",), "sessions:show"),
    Command(("ui",), "sessions:ui"),
    Command(("interactions",), "interactions:interactions"),
    Command(("feedback",), "interactions:feedback"),
)
