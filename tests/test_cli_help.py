"""``--help`` as a user reads it: every command's options, the commands of
the application and of each group, exit codes, and that asking for help
loads nothing it does not print (neither typer, pydantic nor rich, nor the
commands' own modules for the application's list). Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from cli_process import CLI

from sessions_graph.cli.commands import COMMANDS, GROUPS
from sessions_graph.cli.params import Param

HEAVY = ("pydantic", "typer", "click", "rich", "starlette", "uvicorn", "jinja2")


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSIONS_GRAPH_")}
    env.update(
        SESSIONS_GRAPH_DB=str(tmp_path / "cli.db"),
        SESSIONS_GRAPH_USER_ID="alice",
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        COLUMNS="100",
    )
    return env


#: Runs the CLI as ``python -m sessions_graph`` does, and prints the modules
#: it loaded when it exits (``-X importtime`` misses those imported through
#: ``importlib.import_module``, as the commands' modules are).
LOADED = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print(*sorted(sys.modules), file=sys.stderr))\n"
    "sys.argv[0] = 'sessions-graph'\n"
    "runpy.run_module('sessions_graph', run_name='__main__', alter_sys=True)\n"
)


def cli(tmp_path: Path, *args: str, loaded: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", LOADED] if loaded else CLI
    return subprocess.run(
        [*command, *args], env=env_for(tmp_path), capture_output=True, text=True, timeout=120
    )


def modules(result: subprocess.CompletedProcess[str]) -> set[str]:
    return set(result.stderr.split())


def declared(command: object) -> dict[str, Param]:
    module, name = command.target.split(":")  # type: ignore[attr-defined]
    func = getattr(import_module(f"sessions_graph.cli.{module}"), name)
    return {n: d for n, d in zip(func.__code__.co_varnames, func.__defaults__ or (), strict=False)}


def test_the_application_lists_every_command_and_loads_none_of_them(tmp_path: Path) -> None:
    result = cli(tmp_path, "--help", loaded=True)

    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert out.startswith("usage: sessions-graph [--db PATH] COMMAND")
    for command in COMMANDS:
        if len(command.words) == 1:
            assert f"{command.words[0]} {command.help}" in out
    for name, text in GROUPS.items():
        assert f"{name} {text}" in out
    loaded = modules(result)
    assert not {m for m in loaded if m.startswith(HEAVY)}
    commands = {f"sessions_graph.cli.{c.target.split(':')[0]}" for c in COMMANDS}
    assert not loaded & commands


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if not c.own_help], ids=lambda c: " ".join(c.words)
)
def test_each_command_shows_its_options(tmp_path: Path, command: object) -> None:
    words = command.words  # type: ignore[attr-defined]
    result = cli(tmp_path, *words, "--help")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: sessions-graph {' '.join(words)} ")
    out = " ".join(result.stdout.split())
    for name, param in declared(command).items():
        if param.argument:
            assert (param.metavar or name.upper()) in out
        else:
            for flag in param.decls:
                assert flag in out
        if param.help:
            assert " ".join(param.help.split()) in out


def test_a_commands_help_says_its_ranges_defaults_and_brackets(tmp_path: Path) -> None:
    result = cli(tmp_path, "ui", "--help", loaded=True)

    out = " ".join(result.stdout.split())
    assert "--port N Port on 127.0.0.1 (0: any free one). [0<=x<=65535] [default: 8787]" in out
    assert "(extra [ui])" in out  # printed as written, not read as markup
    loaded = modules(result)
    assert not {m for m in loaded if m.startswith(HEAVY)}
    assert "sessions_graph.cli.sessions" in loaded  # its own module, for its options
    assert "sessions_graph.graph" not in loaded


def test_help_wins_over_the_other_words(tmp_path: Path) -> None:
    # As click's eager --help: a value out of range next to it is not checked.
    result = cli(
        tmp_path, "--db", str(tmp_path / "x.db"), "memory", "list", "--limit", "0", "--help"
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: sessions-graph memory list ")
    assert not (tmp_path / "x.db").exists()


def test_after_double_dash_help_is_text(tmp_path: Path) -> None:
    saved = cli(tmp_path, "memory", "add", "--", "--help")
    assert saved.returncode == 0, saved.stderr
    listed = cli(tmp_path, "memory", "list")
    assert "--help" in listed.stdout


@pytest.mark.parametrize(
    ("args", "code", "usage"),
    [
        ((), 2, "usage: sessions-graph [--db PATH] COMMAND"),
        (("--db", "x.db"), 2, "usage: sessions-graph [--db PATH] COMMAND"),
        (("memory",), 2, "usage: sessions-graph memory COMMAND"),
        (("memory", "--help"), 0, "usage: sessions-graph memory COMMAND"),
        (("config", "--help"), 0, "usage: sessions-graph config COMMAND"),
    ],
)
def test_no_command_shows_the_help_of_what_was_named(
    tmp_path: Path, args: tuple[str, ...], code: int, usage: str
) -> None:
    result = cli(tmp_path, *args)

    assert result.returncode == code
    assert result.stdout.startswith(usage)
    if args[:1] == ("memory",):
        for command in COMMANDS:
            if command.words[0] == "memory":
                assert command.words[1] in result.stdout


def test_an_unknown_command_with_help_is_an_error(tmp_path: Path) -> None:
    result = cli(tmp_path, "memory", "frob", "--help")

    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: No such command 'frob'")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.words))
def test_the_table_line_is_the_docstrings_first_paragraph(command: object) -> None:
    module_name, name = command.target.split(":")  # type: ignore[attr-defined]
    module = import_module(f"sessions_graph.cli.{module_name}")
    # recall's function hands its words to recall's own parser, whose
    # description is the module's SUMMARY.
    doc = getattr(module, "SUMMARY", None) or getattr(module, name).__doc__ or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    assert command.help == first  # type: ignore[attr-defined]
