"""install-hooks: writes every event, keeps what was there, idempotent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import CHECKOUT

from sessions_graph.hooks.install import (
    CLAUDE_EVENTS,
    MCP_SERVER_NAME,
    allowed_tool_rules,
    install_hooks,
    is_ours,
    mcp_server_entry,
    register_codex_mcp,
    register_mcp_json,
    uninstall_hooks,
    unregister_codex_mcp,
    unregister_mcp_json,
)

SCRIPT = str(Path(sys.executable).parent / "sessions-graph")


def on_path() -> dict[str, str]:
    """The environment of a user who has sessions-graph on PATH."""
    return {**os.environ, "PATH": f"{Path(SCRIPT).parent}{os.pathsep}{os.environ['PATH']}"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)


def test_install_project_keeps_other_keys_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    other_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(ls:*)"]},
                "model": "opus",
                "hooks": {
                    "PreToolUse": [other_hook],
                    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
                },
            }
        )
    )
    first = _cli("install-hooks", "--project", str(tmp_path))
    assert first.returncode == 0, first.stderr
    for event in CLAUDE_EVENTS:
        assert event in first.stdout
    data = json.loads(settings.read_text())
    # The user's rule first, then our read-only tools, allowed by default.
    assert data["permissions"] == {"allow": ["Bash(ls:*)", *allowed_tool_rules()]}
    assert data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == [other_hook]
    stop_commands = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands[0] == "say done" and is_ours(stop_commands[1])
    for event in CLAUDE_EVENTS:
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if is_ours(h["command"])]
        # By name: the project's files are committed, and run on teammates' machines.
        assert [h["command"] for h in ours] == ["sessions-graph hook"]
    assert data["hooks"]["PostToolUse"][-1]["matcher"] == "*"

    before = settings.read_bytes()
    second = _cli("install-hooks", "--project", str(tmp_path))
    assert second.returncode == 0
    assert "nothing changed" in second.stdout
    assert settings.read_bytes() == before


def test_install_user_uses_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    result = _cli("install-hooks", "--user")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".claude" / "settings.json").is_file()
    codex = _cli("install-hooks", "--user", "--codex")
    assert codex.returncode == 0
    hooks = json.loads((tmp_path / ".codex" / "hooks.json").read_text())["hooks"]
    assert "SessionEnd" not in hooks and "Stop" in hooks


def test_install_updates_an_old_command_in_place(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    old = {"hooks": [{"type": "command", "command": "/old/venv/bin/sessions-graph hook"}]}
    settings.write_text(json.dumps({"hooks": {"Stop": [old]}}))
    changes = install_hooks(settings, ("Stop",), "/new/bin/sessions-graph hook")
    assert changes == ["Stop: updated command to /new/bin/sessions-graph hook"]
    data = json.loads(settings.read_text())
    assert data["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "/new/bin/sessions-graph hook"}]}
    ]


def test_install_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    broken = _cli("install-hooks", "--project", str(tmp_path))
    assert broken.returncode != 0
    assert broken.stderr.count("\n") == 1 and "not valid JSON" in broken.stderr
    both = _cli("install-hooks", "--project", str(tmp_path), "--user")
    assert both.returncode == 2 and "either" in both.stderr
    missing = _cli("install-hooks", "--project", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def test_is_ours() -> None:
    assert is_ours("/x/bin/sessions-graph hook")
    assert is_ours("'/a b/python' -m sessions_graph hook")
    assert not is_ours("sessions-graph reconcile")
    assert not is_ours("./guard.sh")
    assert not is_ours("cd ~/src/sessions-graph && ./notify.sh hook")
    assert is_ours("SESSIONS_GRAPH_USER_ID=alice nice /opt/bin/sessions-graph hook")
    assert not is_ours(None)


# -- settings files are written as the user keeps them --------------------------------
def test_a_symlinked_settings_file_is_written_through_the_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"model": "opus"}))
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.symlink_to(dotfiles)
    install_hooks(settings, ("Stop",), "/bin/sessions-graph hook")
    assert settings.is_symlink() and settings.resolve() == dotfiles.resolve()
    data = json.loads(dotfiles.read_text())
    assert data["model"] == "opus" and "Stop" in data["hooks"]
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no temp left


def test_the_file_mode_is_kept(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-ant-secret"}}))
    settings.chmod(0o600)
    install_hooks(settings, ("Stop",), "/bin/sessions-graph hook")
    assert settings.stat().st_mode & 0o777 == 0o600
    uninstall_hooks(settings)
    assert settings.stat().st_mode & 0o777 == 0o600


def test_a_settings_file_install_creates_is_private(tmp_path: Path) -> None:
    """It may come to hold API keys (a settings file's env)."""
    settings = tmp_path / "settings.json"
    install_hooks(settings, ("Stop",), "/bin/sessions-graph hook")
    assert settings.stat().st_mode & 0o777 == 0o600


def test_a_customised_command_of_ours_is_kept(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    custom = "SESSIONS_GRAPH_USER_ID=alice /opt/bin/sessions-graph hook"
    settings.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": custom}]}]}})
    )
    assert install_hooks(settings, ("Stop",), "/new/bin/sessions-graph hook") == []
    stop = json.loads(settings.read_text())["hooks"]["Stop"]
    assert [h["command"] for g in stop for h in g["hooks"]] == [custom]


# -- uninstall ---------------------------------------------------------------------------
def test_uninstall_removes_exactly_what_install_added(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "g"}]}],
        },
    }
    settings.write_text(json.dumps(original))
    claude_json = tmp_path / ".claude.json"
    other_server = {"type": "stdio", "command": "uvx", "args": ["other-mcp"], "env": {}}
    state = {"numStartups": 3, "mcpServers": {"other": other_server}}
    claude_json.write_text(json.dumps(state))
    claude_json.chmod(0o600)

    installed = _cli("install-hooks")
    assert installed.returncode == 0, installed.stderr
    assert str(claude_json) in installed.stdout
    servers = json.loads(claude_json.read_text())["mcpServers"]
    assert servers["other"] == other_server
    ours = servers[MCP_SERVER_NAME]
    assert ours["type"] == "stdio" and ours["args"][-1] == "mcp"
    assert ours["command"].startswith("/")
    assert claude_json.stat().st_mode & 0o777 == 0o600

    removed = _cli("uninstall-hooks")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings.read_text()) == original
    assert json.loads(claude_json.read_text()) == state
    again = _cli("uninstall-hooks")
    assert again.returncode == 0 and "nothing changed" in again.stdout


def test_project_scope_registers_in_the_projects_mcp_json(tmp_path: Path) -> None:
    result = _cli("install-hooks", "--project", str(tmp_path))
    assert result.returncode == 0, result.stderr
    mcp_json = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp_json["mcpServers"][MCP_SERVER_NAME]["args"][-1] == "mcp"
    assert _cli("uninstall-hooks", "--project", str(tmp_path)).returncode == 0
    # Both files were created by install: nothing of the user's is in them.
    assert not (tmp_path / ".mcp.json").exists()
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_no_mcp_installs_hooks_only(tmp_path: Path) -> None:
    result = _cli("install-hooks", "--project", str(tmp_path), "--no-mcp")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / ".mcp.json").exists()


def test_a_customised_or_foreign_server_entry_is_kept(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    custom = {
        "type": "stdio",
        "command": "/opt/bin/sessions-graph",
        "args": ["mcp"],
        "env": {"SESSIONS_GRAPH_USER_ID": "alice"},
    }
    config.write_text(json.dumps({"mcpServers": {MCP_SERVER_NAME: custom}}))
    assert register_mcp_json(config, mcp_server_entry(portable=False)) == []
    assert json.loads(config.read_text())["mcpServers"][MCP_SERVER_NAME] == custom
    # A server of the same name that does not run sessions-graph is not ours to remove.
    foreign = {"type": "stdio", "command": "node", "args": ["server.js"]}
    config.write_text(json.dumps({"mcpServers": {MCP_SERVER_NAME: foreign}}))
    assert register_mcp_json(config, mcp_server_entry(portable=False)) == []
    assert unregister_mcp_json(config) == []
    assert json.loads(config.read_text())["mcpServers"][MCP_SERVER_NAME] == foreign


def test_codex_config_toml_round_trip(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import tomllib

    monkeypatch.setenv("HOME", str(tmp_path))
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    original = (
        '# my codex settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
        'args = ["--port", "1"]\n\n[profiles.fast]\nmodel = "o4-mini"\n'
    )
    config.write_text(original)
    result = _cli("install-hooks", "--codex")
    assert result.returncode == 0, result.stderr
    parsed = tomllib.loads(config.read_text())
    ours = parsed["mcp_servers"][MCP_SERVER_NAME]
    assert ours["args"][-1] == "mcp" and ours["command"].startswith("/")
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--port", "1"]}
    assert parsed["profiles"] == {"fast": {"model": "o4-mini"}} and parsed["model"] == "o3"
    # docs/hooks.md: Codex waits up to 5 s for our server to start.
    assert parsed["mcp_optional_startup_grace_ms"] == 5000
    before = config.read_text()
    assert "nothing changed" in _cli("install-hooks", "--codex").stdout
    assert config.read_text() == before

    assert _cli("uninstall-hooks", "--codex").returncode == 0
    assert config.read_text() == original
    assert not (tmp_path / ".codex" / "hooks.json").exists()


def test_codex_table_in_the_middle_is_removed_alone(tmp_path: Path) -> None:
    import tomllib

    config = tmp_path / "config.toml"
    config.write_text(
        '[mcp_servers.sessions-graph]\ncommand = "/old/bin/sessions-graph"\nargs = ["mcp"]\n\n'
        '[mcp_servers.sessions-graph.env]\nX = "1"\n\n[other]\nk = 1\n'
    )
    # Customised (an env table): kept by install, removed by uninstall.
    assert register_codex_mcp(config, "/new/bin/sessions-graph", ["mcp"]) == []
    assert unregister_codex_mcp(config) == [f"[mcp_servers.{MCP_SERVER_NAME}]: removed"]
    assert tomllib.loads(config.read_text()) == {"other": {"k": 1}}


def test_a_broken_config_toml_is_one_error_line(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("[unclosed\n")
    result = _cli("install-hooks", "--codex")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "not valid TOML" in result.stderr
    assert not (tmp_path / ".codex" / "hooks.json").exists()  # nothing half done


def test_user_scope_follows_claude_config_dir_and_codex_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert _cli("install-hooks").returncode == 0
    assert _cli("install-hooks", "--codex").returncode == 0
    assert (tmp_path / "claude-config" / "settings.json").is_file()
    servers = json.loads((tmp_path / "claude-config" / ".claude.json").read_text())
    assert MCP_SERVER_NAME in servers["mcpServers"]
    assert (tmp_path / "codex-home" / "hooks.json").is_file()
    assert MCP_SERVER_NAME in (tmp_path / "codex-home" / "config.toml").read_text()
    assert not (tmp_path / "home").exists()


def test_without_the_mcp_extra_only_the_hooks_are_installed(tmp_path: Path) -> None:
    """A server that cannot start would show as failed in every session."""
    code = (
        "import sys; sys.modules['mcp'] = None;"
        f" sys.argv = ['sessions-graph', 'install-hooks', '--project', {str(tmp_path)!r}];"
        " from sessions_graph.__main__ import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=on_path()
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("\n") == 1
    assert f"pip install '{CHECKOUT}[mcp]'" in result.stderr
    assert not (tmp_path / ".mcp.json").exists()
    assert "Stop" in json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]


def test_an_older_plain_registration_of_ours_is_updated(tmp_path: Path) -> None:
    import tomllib

    config = tmp_path / ".mcp.json"
    old = {"type": "stdio", "command": "/old/venv/bin/sessions-graph", "args": ["mcp"], "env": {}}
    config.write_text(json.dumps({"mcpServers": {MCP_SERVER_NAME: old, "x": {"command": "y"}}}))
    entry = mcp_server_entry(portable=False)
    assert register_mcp_json(config, entry)[0].startswith(f"mcpServers.{MCP_SERVER_NAME}: updated")
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers == {MCP_SERVER_NAME: entry, "x": {"command": "y"}}

    toml = tmp_path / "config.toml"
    toml.write_text(
        '[mcp_servers.sessions-graph]\ncommand = "/old/venv/bin/sessions-graph"\n'
        'args = ["mcp"]\n\n[other]\nk = 1\n'
    )
    changes = register_codex_mcp(toml, "/new/bin/sessions-graph", ["mcp"])
    assert changes[0].startswith(f"[mcp_servers.{MCP_SERVER_NAME}]: updated")
    assert tomllib.loads(toml.read_text()) == {
        "mcp_servers": {MCP_SERVER_NAME: {"command": "/new/bin/sessions-graph", "args": ["mcp"]}},
        "other": {"k": 1},
    }


# -- only what is ours, all or nothing ---------------------------------------------------
def _user_settings(home: Path, hooks: dict[str, list[str]], **other: object) -> Path:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    groups = {
        event: [{"hooks": [{"type": "command", "command": c} for c in commands]}]
        for event, commands in hooks.items()
    }
    settings.write_text(json.dumps({**other, "hooks": groups}, indent=4))
    return settings


def _commands(settings: Path, event: str) -> list[str]:
    hooks = json.loads(settings.read_text())["hooks"]
    return [h["command"] for g in hooks.get(event, []) for h in g["hooks"]]


def test_a_command_that_only_mentions_sessions_graph_is_the_users(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    notify = "cd ~/src/sessions-graph && ./notify.sh hook"
    make = "cd ~/src/sessions-graph && make hook"
    settings = _user_settings(tmp_path, {"Stop": [make], "SessionEnd": [notify]})
    before = settings.read_bytes()
    # Nothing of ours is there: uninstall leaves the file (the user's whole file) alone.
    removed = _cli("uninstall-hooks", "--user")
    assert removed.returncode == 0 and "nothing changed" in removed.stdout
    assert settings.read_bytes() == before
    installed = _cli("install-hooks", "--no-mcp")
    assert installed.returncode == 0, installed.stderr
    assert _commands(settings, "Stop") == [make, f"{SCRIPT} hook"]
    assert _commands(settings, "SessionEnd") == [notify, f"{SCRIPT} hook"]
    assert _cli("uninstall-hooks").returncode == 0
    assert _commands(settings, "Stop") == [make]
    assert _commands(settings, "SessionEnd") == [notify]


def test_values_install_did_not_add_are_written_back_as_they_were(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    claude_json = tmp_path / ".claude.json"
    # A lone surrogate escape (a cut emoji in a stored prompt) and a number
    # beyond a double, as Claude Code's state file may hold them.
    claude_json.write_text('{"lastPrompt": "fix \\ud83d", "cost": 1e400, "ratio": 0.10}')
    result = _cli("install-hooks")
    assert result.returncode == 0, result.stderr
    text = claude_json.read_text()
    assert '"fix \\ud83d"' in text and '"cost": 1e400' in text and '"ratio": 0.10' in text
    assert "Infinity" not in text
    node = shutil.which("node")
    data = json.loads(text)
    assert data["lastPrompt"] == "fix \ud83d" and MCP_SERVER_NAME in data["mcpServers"]
    if node:  # the reader that matters: Claude Code parses it with Node
        parsed = subprocess.run(
            [
                node,
                "-e",
                "JSON.parse(require('fs').readFileSync(process.argv[1]))",
                str(claude_json),
            ],
            capture_output=True,
        )
        assert parsed.returncode == 0, parsed.stderr
    assert "Stop" in json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert _cli("uninstall-hooks").returncode == 0
    after = claude_json.read_text()
    assert '"fix \\ud83d"' in after and '"cost": 1e400' in after and "mcpServers" not in after


@pytest.mark.parametrize("value", ['"none"', "3", '["a"]'])
def test_a_codex_mcp_servers_that_is_not_a_table_is_one_line_and_changes_nothing(
    tmp_path: Path, monkeypatch, value: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'model = "o3"\nmcp_servers = {value}\n')
    for command in ("install-hooks", "uninstall-hooks"):
        result = _cli(command, "--codex")
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert "'mcp_servers' is not a table" in result.stderr
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]  # no hooks.json


def test_install_is_all_or_nothing_when_a_file_cannot_be_written(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import resource

    monkeypatch.setenv("HOME", str(tmp_path))
    settings = _user_settings(tmp_path, {"Stop": ["say done"]}, model="opus")
    before = settings.read_bytes()
    claude_json = tmp_path / ".claude.json"
    # A long-used state file; the disk takes no file that size any more.
    claude_json.write_text(
        json.dumps({"projects": {f"/p/{n}": {"x": "y" * 50} for n in range(2000)}})
    )
    state = claude_json.read_bytes()
    limit = len(state) // 2

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run(
        [SCRIPT, "install-hooks"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=small_files,
    )
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot write {claude_json}")
    assert settings.read_bytes() == before  # the hooks went back out
    assert claude_json.read_bytes() == state
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


# -- a project's files are shared --------------------------------------------------------
def test_a_project_install_works_for_a_teammate_and_uninstall_leaves_nothing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README").write_text("hi\n")
    installed = subprocess.run(
        [SCRIPT, "install-hooks", "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        env=on_path(),
    )
    assert installed.returncode == 0 and installed.stderr == "", installed.stderr
    files = [project / ".mcp.json", project / ".claude" / "settings.json"]
    for path in files:  # no path of this machine in a file the project commits
        assert str(Path(SCRIPT).parent) not in path.read_text()
    server = json.loads(files[0].read_text())["mcpServers"][MCP_SERVER_NAME]
    assert (server["command"], server["args"]) == ("sessions-graph", ["mcp"])
    # A teammate with sessions-graph on PATH (here: another HOME, the same
    # install) runs the hook command as Claude Code does, through a shell.
    (command,) = _commands(files[1], "SessionStart")
    teammate = {**on_path(), "HOME": str(tmp_path / "teammate")}
    teammate["SESSIONS_GRAPH_DB"] = str(tmp_path / "teammate.db")
    payload = json.dumps({"session_id": "s-1", "hook_event_name": "SessionStart", "cwd": "/x"})
    ran = subprocess.run(
        ["sh", "-c", command], input=payload, capture_output=True, text=True, env=teammate
    )
    assert (ran.returncode, ran.stderr) == (0, "")
    assert (tmp_path / "teammate.db").exists()
    # Without it on PATH, install says so, in one line.
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}
    again = subprocess.run(
        [SCRIPT, "install-hooks", "--project", str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        env=bare,
    )
    assert again.returncode == 0 and again.stderr.count("\n") == 1
    assert "sessions-graph is not on this PATH" in again.stderr

    removed = _cli("uninstall-hooks", "--project", str(project))
    assert removed.returncode == 0, removed.stderr
    assert sorted(p.name for p in project.iterdir()) == ["README"]


def test_install_allows_the_read_only_tools_and_uninstall_removes_only_those(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    users = ["Bash(ls:*)", "mcp__sessions-graph", "mcp__other__recall"]
    original = {"permissions": {"allow": list(users), "deny": ["Read(.env)"]}}
    settings.write_text(json.dumps(original))
    result = _cli("install-hooks", "--project", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "permissions.allow: added mcp__sessions-graph__recall" in result.stdout
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert allow == [
        *users,
        "mcp__sessions-graph__recall",
        "mcp__sessions-graph__search_memories",
        "mcp__sessions-graph__list_sessions",
        "mcp__sessions-graph__get_session",
        "mcp__sessions-graph__session_entities",
    ]
    assert not any("save_memory" in r or "delete_memory" in r for r in allow)  # writes stay asked
    again = _cli("install-hooks", "--project", str(tmp_path))
    assert json.loads(settings.read_text())["permissions"]["allow"] == allow  # each once
    assert "nothing changed" in again.stdout

    removed = _cli("uninstall-hooks", "--project", str(tmp_path))
    assert removed.returncode == 0, removed.stderr
    assert "permissions.allow: removed" in removed.stdout
    assert json.loads(settings.read_text()) == original  # the user's rules, as they were


def test_no_allow_tools_leaves_the_permissions_alone(tmp_path: Path) -> None:
    result = _cli("install-hooks", "--project", str(tmp_path), "--no-allow-tools")
    assert result.returncode == 0, result.stderr
    data = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert "permissions" not in data and "hooks" in data
    assert (tmp_path / ".mcp.json").exists()  # the server is still registered
    # Uninstalling after it finds no rule of ours, and removes everything it added.
    assert _cli("uninstall-hooks", "--project", str(tmp_path)).returncode == 0
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_codex_install_writes_no_claude_permissions(tmp_path: Path) -> None:
    result = _cli("install-hooks", "--project", str(tmp_path), "--codex")
    assert result.returncode == 0, result.stderr
    assert "permissions" not in result.stdout
    assert not (tmp_path / ".claude").exists()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # Between two tables of the user's: their layout is kept, blank line and all.
        ('model = "o3"\n\n{ours}\n[other]\nk = 1\n', 'model = "o3"\n\n[other]\nk = 1\n'),
        # Several blank lines after ours belong to the user's layout too.
        ("[a]\nx = 1\n\n{ours}\n\n\n[b]\ny = 2\n", "[a]\nx = 1\n\n\n\n[b]\ny = 2\n"),
        # Right after the first line, then a sub-table of ours.
        (
            'model = "o3"\n{ours}[mcp_servers.sessions-graph.env]\nX = "1"\n[z]\nk = 0\n',
            'model = "o3"\n[z]\nk = 0\n',
        ),
        # The last table of the file.
        ("[a]\nx = 1\n\n{ours}", "[a]\nx = 1\n"),
    ],
)
def test_removing_our_codex_table_leaves_the_rest_of_the_file_as_written(
    tmp_path: Path, before: str, after: str
) -> None:
    """Uninstall takes out our table and nothing of the user's: not the
    header of the table after it, not the blank lines that separate the
    user's own tables."""
    ours = f'[mcp_servers.{MCP_SERVER_NAME}]\ncommand = "/bin/sessions-graph"\nargs = ["mcp"]\n'
    config = tmp_path / "config.toml"
    config.write_text(before.format(ours=ours))
    assert unregister_codex_mcp(config) == [f"[mcp_servers.{MCP_SERVER_NAME}]: removed"]
    assert config.read_text() == after
