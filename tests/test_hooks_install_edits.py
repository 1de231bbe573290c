"""What install and uninstall write, called in-process (fast): which commands
and server entries count as ours, which are replaced, the exact text of the
files written, their modes, and all or nothing when a second file fails."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import tomllib

from sessions_graph.errors import ConfigError
from sessions_graph.hooks.install import (
    MCP_SERVER_NAME,
    Edit,
    allowed_tool_rules,
    apply_edits,
    hook_command,
    install_hooks,
    mcp_server_entry,
    plan_install_hooks,
    plan_register_codex_mcp,
    plan_unregister_codex_mcp,
    register_codex_mcp,
    register_mcp_json,
    uninstall_hooks,
    unregister_mcp_json,
)

NEW = "/new/bin/sessions-graph hook"


def _settings(path: Path, commands: list[str], **other: object) -> Path:
    group = {"hooks": [{"type": "command", "command": c} for c in commands]}
    path.write_text(json.dumps({**other, "hooks": {"Stop": [group]}}))
    return path


def _stop_commands(path: Path) -> list[str]:
    return [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]


# -- which hook commands are ours ----------------------------------------------------------
@pytest.mark.parametrize(
    "old",
    [
        "/old/venv/bin/sessions-graph hook",
        "sessions-graph hook",  # a project's portable command, now installed at user scope
        "/usr/bin/python3 -m sessions_graph hook",
        "'/a b/python' -m sessions_graph hook",
    ],
)
def test_an_older_command_of_ours_in_the_shape_install_writes_is_replaced(
    tmp_path: Path, old: str
) -> None:
    settings = _settings(tmp_path / "settings.json", ["say done", old])
    assert install_hooks(settings, ("Stop",), NEW) == [f"Stop: updated command to {NEW}"]
    assert _stop_commands(settings) == ["say done", NEW]


@pytest.mark.parametrize(
    "custom",
    [
        "nice /opt/bin/sessions-graph hook",
        "env X=1 /opt/bin/sessions-graph hook",  # four words, as the python -m shape
        "X=1 /usr/bin/python3 -m sessions_graph hook",
    ],
)
def test_a_command_of_ours_the_user_changed_is_kept_as_it_is(tmp_path: Path, custom: str) -> None:
    settings = _settings(tmp_path / "settings.json", [custom])
    before = settings.read_bytes()
    assert install_hooks(settings, ("Stop",), NEW) == []
    assert settings.read_bytes() == before
    assert uninstall_hooks(settings) == ["Stop: removed the sessions-graph hook"]


def test_hooks_that_are_not_ours_are_kept_and_never_break_install(tmp_path: Path) -> None:
    """An empty command, a lone word ``hook``, unbalanced quotes, a prompt
    hook (no command at all), another event's hook: the user's."""
    theirs = ["", "hook", "notify 'unbalanced hook", "say done"]
    prompt = {"type": "prompt", "prompt": "Check that the tests pass"}
    guard = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    settings = tmp_path / "settings.json"
    groups = [{"hooks": [{"type": "command", "command": c} for c in theirs]}, {"hooks": [prompt]}]
    settings.write_text(json.dumps({"hooks": {"Stop": groups, "PreToolUse": [guard]}}))
    assert install_hooks(settings, ("Stop",), NEW) == [f"Stop: added {NEW}"]
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert stop == [*groups, {"hooks": [{"type": "command", "command": NEW}]}]
    assert uninstall_hooks(settings) == ["Stop: removed the sessions-graph hook"]
    assert json.loads(settings.read_text()) == {"hooks": {"Stop": groups, "PreToolUse": [guard]}}


def test_the_hook_function_allows_no_tools(tmp_path: Path) -> None:
    """Permission rules are Claude Code's, written only when asked (not in Codex's hooks.json)."""
    settings = tmp_path / "hooks.json"
    install_hooks(settings, ("Stop",), NEW)
    assert set(json.loads(settings.read_text())) == {"hooks"}


def test_install_creates_the_missing_directories_of_its_file(tmp_path: Path) -> None:
    settings = tmp_path / "config" / "claude" / "settings.json"
    install_hooks(settings, ("Stop",), NEW)
    assert _stop_commands(settings) == [NEW]


# -- how we are run --------------------------------------------------------------------------
@pytest.mark.parametrize("script", ["absent", "not executable", "executable"])
def test_the_command_names_the_venvs_script_only_when_it_can_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    executable = python.parent / "sessions-graph"
    if script != "absent":
        executable.write_text("#!/bin/sh\n")
        executable.chmod(0o755 if script == "executable" else 0o644)
    monkeypatch.setattr(sys, "executable", str(python))
    entry = mcp_server_entry(portable=False)
    if script == "executable":
        assert hook_command(portable=False) == f"{executable} hook"
        assert (entry["command"], entry["args"]) == (str(executable), ["mcp"])
    else:
        assert hook_command(portable=False) == shlex.join(
            [str(python), "-m", "sessions_graph", "hook"]
        )
        assert (entry["command"], entry["args"]) == (str(python), ["-m", "sessions_graph", "mcp"])
    portable = mcp_server_entry(portable=True)
    assert (portable["command"], portable["args"], hook_command(True)) == (
        "sessions-graph",
        ["mcp"],
        "sessions-graph hook",
    )


# -- MCP server entries: only ours is replaced or removed ----------------------------------
@pytest.mark.parametrize(
    "theirs",
    [
        "off",  # not an object
        {"command": ["/opt/bin/sessions-graph", "mcp"]},  # not a command string
        {"command": "/opt/bin/sessions-graph", "args": 5},  # args not a list
        {"command": "/opt/bin/sessions-graph", "args": ["mcp", 1]},  # args not all strings
        {"command": "node", "args": [1]},
    ],
)
def test_a_same_named_server_entry_that_is_not_ours_is_left_alone(
    tmp_path: Path, theirs: object
) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {MCP_SERVER_NAME: theirs}}))
    before = config.read_bytes()
    assert register_mcp_json(config, mcp_server_entry(portable=True)) == []
    assert unregister_mcp_json(config) == []
    assert config.read_bytes() == before


def test_a_created_servers_file_is_shared_in_a_project_and_private_at_home(tmp_path: Path) -> None:
    """A project's .mcp.json is committed; ~/.claude.json may come to hold credentials."""
    project, home = tmp_path / "project", tmp_path / "home"
    register_mcp_json(project / ".mcp.json", mcp_server_entry(portable=True))
    register_mcp_json(home / ".claude.json", mcp_server_entry(portable=False))
    assert (project / ".mcp.json").stat().st_mode & 0o7777 == 0o644
    assert (home / ".claude.json").stat().st_mode & 0o7777 == 0o600
    added = [f"mcpServers.{MCP_SERVER_NAME}: added sessions-graph mcp"]
    assert register_mcp_json(tmp_path / "x" / ".mcp.json", mcp_server_entry(True)) == added


# -- the JSON written ------------------------------------------------------------------------
def test_settings_are_written_as_claude_code_writes_them(tmp_path: Path) -> None:
    """Two-space indentation and the user's characters as they typed them."""
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus", "statusLine": "café ☕"}')
    install_hooks(settings, ("Stop",), NEW)
    text = settings.read_text(encoding="utf-8")
    expected = {
        "model": "opus",
        "statusLine": "café ☕",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": NEW}]}]},
    }
    assert text == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def test_a_number_or_list_among_the_allowed_rules_survives_install_and_uninstall(
    tmp_path: Path,
) -> None:
    """The user's list may hold any JSON value: ours are added and removed
    around them, and a number keeps the text it was written with."""
    settings = tmp_path / "settings.json"
    settings.write_text('{"permissions": {"allow": ["Bash(ls:*)", 1.50, ["x"]]}}')
    edit = plan_install_hooks(settings, ("Stop",), NEW, allow_tools=True)
    apply_edits([edit])
    assert '"Bash(ls:*)",\n      1.50,' in settings.read_text()
    assert uninstall_hooks(settings) == [
        "permissions.allow: removed " + ", ".join(allowed_tool_rules()),
        "Stop: removed the sessions-graph hook",
    ]
    assert settings.read_text() == (
        '{\n  "permissions": {\n    "allow": [\n      "Bash(ls:*)",\n      1.50,\n'
        '      [\n        "x"\n      ]\n    ]\n  }\n}\n'
    )


# -- all or nothing --------------------------------------------------------------------------
def test_a_failed_second_write_puts_the_first_file_back_as_it_was(tmp_path: Path) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text('{"model": "opus"}')
    kept.chmod(0o640)
    created = tmp_path / "created.json"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    edits = [
        plan_install_hooks(kept, ("Stop",), NEW),
        plan_install_hooks(created, ("Stop",), NEW),
        Edit(blocked / "settings.json", ["added"], "{}\n"),  # its directory is a file
    ]
    with pytest.raises(ConfigError, match=r"a-file/settings\.json"):
        apply_edits(edits)
    assert kept.read_text() == '{"model": "opus"}'
    assert kept.stat().st_mode & 0o7777 == 0o640
    assert not created.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "kept.json"]


# -- Codex's config.toml ---------------------------------------------------------------------
_OURS = '[mcp_servers.sessions-graph]\ncommand = "/bin/sessions-graph"\nargs = ["mcp"]\n'


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("", _OURS),
        ('model = "o3"', f'model = "o3"\n\n{_OURS}'),  # no newline at its end
        ('model = "o3"\n', f'model = "o3"\n\n{_OURS}'),
    ],
)
def test_our_codex_table_is_appended_after_a_blank_line(
    tmp_path: Path, before: str, after: str
) -> None:
    config = tmp_path / "config.toml"
    if before:
        config.write_text(before)
    assert register_codex_mcp(config, "/bin/sessions-graph", ["mcp"]) == [
        f"[mcp_servers.{MCP_SERVER_NAME}]: added /bin/sessions-graph mcp"
    ]
    assert config.read_text() == after


@pytest.mark.parametrize("head", ["", 'model = "o3"\n\n'])
def test_an_older_codex_table_is_rewritten_in_place(tmp_path: Path, head: str) -> None:
    config = tmp_path / "config.toml"
    old = '[mcp_servers.sessions-graph]\ncommand = "/old/bin/sessions-graph"\nargs = ["mcp"]\n'
    config.write_text(f"{head}{old}\n[other]\nk = 1\n")
    register_codex_mcp(config, "/bin/sessions-graph", ["mcp"])
    assert config.read_text() == f"{head}{_OURS}\n[other]\nk = 1\n"


def test_a_codex_command_path_keeps_its_characters(tmp_path: Path) -> None:
    """A path outside ASCII (an accented home, an emoji) is written as is."""
    config = tmp_path / "config.toml"
    command = "/home/zoé/🚀/bin/sessions-graph"
    register_codex_mcp(config, command, ["mcp"], ["SESSIONS_GRAPH_DB"])
    assert command in config.read_text(encoding="utf-8")
    assert tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"][MCP_SERVER_NAME] == {
        "command": command,
        "args": ["mcp"],
        "env_vars": ["SESSIONS_GRAPH_DB"],
    }


def test_uninstall_takes_only_our_startup_grace_and_leaves_a_profiles_own(tmp_path: Path) -> None:
    """A profile that sets the same grace, in the same words, keeps it."""
    config = tmp_path / "config.toml"
    edit = plan_register_codex_mcp(config, "/bin/sessions-graph", ["mcp"], startup_grace=True)
    profile = f"[profiles.slow]\n{edit.text.splitlines(keepends=True)[0]}"
    profile += "mcp_optional_startup_grace_ms = 5000\n"
    original = f'model = "o3"\n\n{profile}'
    config.write_text(original)
    apply_edits(
        [plan_register_codex_mcp(config, "/bin/sessions-graph", ["mcp"], startup_grace=True)]
    )
    assert tomllib.loads(config.read_text())["mcp_optional_startup_grace_ms"] == 5000
    apply_edits([plan_unregister_codex_mcp(config)])
    assert config.read_text() == original
