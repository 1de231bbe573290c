"""Every ``sessions-graph`` command: its words and where its function lives.

One table for every way a command line is handled: ``cli.parse`` imports
only the invoked command's module, ``cli.help`` lists the commands in this
order, and ``cli.app`` builds the typer application from them.
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """One command: ``words`` as typed, ``target`` as ``module:function``
    under ``sessions_graph.cli``, and ``help``, the line ``--help`` lists it
    with (the first paragraph of the function's docstring, which
    ``tests/test_cli_help.py`` holds it to): kept here so that the
    application's help imports none of the commands' modules."""

    words: tuple[str, ...]
    target: str
    help: str
    #: The function takes the rest of the command line as one list and parses
    #: it itself (``hook`` and ``recall``, which ``__main__`` runs before any
    #: of this when they come first).
    passthrough: bool = False
    #: ``--help`` is the command's own (``recall`` and ``hook`` print theirs).
    own_help: bool = False


#: Groups of subcommands, with the help line of each.
GROUPS = {
    "memory": "Save, list, search, update and delete memories.",
    "config": "Read and write settings (config file < environment).",
}

COMMANDS = (
    Command(("setup",), "status:setup", "Create the schema (idempotent)."),
    Command(
        ("status",),
        "status:status",
        "Which engine and where, the schema version, and the user's counts.",
    ),
    Command(("memory", "add"), "memory:add", "Save a memory."),
    Command(
        ("memory", "list"), "memory:list_", "A user's memories (or a session's), newest first."
    ),
    Command(
        ("memory", "search"),
        "memory:search",
        "Full-text search of a user's memories, most relevant first.",
    ),
    Command(
        ("memory", "update"), "memory:update", "Replace the text of one of the user's memories."
    ),
    Command(("memory", "delete"), "memory:delete", "Delete one of the user's memories."),
    Command(
        ("config", "get"),
        "config:get",
        "Print a setting's effective value (defaults < config file < environment).",
    ),
    Command(
        ("config", "set"),
        "config:set_",
        "Write a setting to the config file (checked first: a bad value is refused).",
    ),
    Command(
        ("config", "unset"),
        "config:unset",
        "Remove a setting from the config file (its default applies again).",
    ),
    Command(
        ("config", "list"),
        "config:list_",
        "Every setting's effective value; secrets shortened to their last 4 characters.",
    ),
    Command(
        ("config", "path"), "config:path", "Print where the config file is (it may not exist yet)."
    ),
    Command(
        ("hook",),
        "hooks:hook",
        "Record one agent hook event (JSON on stdin); installed by install-hooks.",
        passthrough=True,
        own_help=True,
    ),
    Command(
        ("install-hooks",),
        "hooks:install",
        "Run `sessions-graph hook` on every session event, register the `sessions-graph "
        "mcp` server and (Claude Code) allow its read-only tools (idempotent).",
    ),
    Command(
        ("uninstall-hooks",),
        "hooks:uninstall",
        "Remove what install-hooks added: our hook commands, our MCP server and the "
        "permission rules that allowed its read-only tools.",
    ),
    Command(
        ("reconcile",),
        "reconcile:reconcile",
        "Extract entities from sessions' text, with LightRAG or locally (out of band).",
    ),
    Command(
        ("entities",),
        "reconcile:entities",
        "Entities a session mentions, described from its own text only.",
    ),
    Command(
        ("forget",),
        "reconcile:forget",
        "Delete a session or a user, and every chunk and entity only they produced.",
    ),
    Command(
        ("demo",),
        "reconcile:demo",
        "Record a bundled agent session, reconcile it (offline unless an LLM is set), show it.",
    ),
    Command(
        ("import",),
        "history:import_",
        "Import Claude Code and Codex history with its original times (idempotent).",
    ),
    Command(
        ("recall",),
        "recall:command",
        "Recall past turns, memories and entities for a question, best first.",
        passthrough=True,
        own_help=True,
    ),
    Command(
        ("mcp",),
        "mcp:mcp",
        "Serve the agent's memory over MCP on stdin/stdout, for the configured user "
        "(install-hooks registers it with Claude Code and Codex).",
    ),
    Command(
        ("memory", "files"),
        "memory_files:files",
        "The memory tool's files at or under PATH, by path.",
    ),
    Command(
        ("memory", "versions"),
        "memory_files:versions",
        "A memory file's kept versions (the last 20), newest first.",
    ),
    Command(
        ("sessions",),
        "sessions:sessions",
        "The user's sessions, newest first: date, project, client, exchanges, "
        "reconciliation status and goal.",
    ),
    Command(
        ("show",),
        "sessions:show",
        "One session: its digest, its exchanges (tool calls one line each), the entities it"
        " mentions and what was injected into it.",
    ),
    Command(
        ("ui",),
        "sessions:ui",
        "Serve the web viewer on 127.0.0.1 (extra [ui]); prints its URL, with the token "
        "every request must carry.",
    ),
    Command(
        ("interactions",),
        "interactions:interactions",
        "The user's interactions, newest first: question, answer, rating, and how many of "
        "the items given with it the answer used.",
    ),
    Command(
        ("feedback",),
        "interactions:feedback",
        "Rate an interaction's answer from 1 (wrong) to 5 (helped): the weights of what it "
        "was given move, and recall ranks them accordingly.",
    ),
)
