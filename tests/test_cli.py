"""The CLI as a user runs it: real processes on a real database file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def cli(tmp_path: Path):
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "cli.db")}

    def run(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "sessions_graph", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert proc.returncode == expect, (proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        return proc

    return run


def test_memory_round_trip(cli) -> None:
    assert "ready: embedded" in cli("setup").stdout
    memory_id = cli(
        "memory", "add", "Prefers Python over TypeScript", "--user", "alice"
    ).stdout.strip()
    cli("memory", "add", "Prefers tabs", "--user", "bob")

    listed = json.loads(cli("memory", "list", "--user", "alice", "--json").stdout)
    assert [m["memory_id"] for m in listed] == [memory_id]

    found = json.loads(cli("memory", "search", "python", "--user", "alice", "--json").stdout)
    assert [m["content"] for m in found] == ["Prefers Python over TypeScript"]
    assert found[0]["score"] > 0
    assert json.loads(cli("memory", "search", "tabs", "--user", "alice", "--json").stdout) == []

    cli("memory", "update", memory_id, "Prefers Python for data tooling", "--user", "alice")
    updated = json.loads(cli("memory", "list", "--user", "alice", "--json").stdout)
    assert updated[0]["content"] == "Prefers Python for data tooling"

    assert f"deleted {memory_id}" in cli("memory", "delete", memory_id, "--user", "alice").stdout
    assert json.loads(cli("memory", "list", "--user", "alice", "--json").stdout) == []


def test_status_counts(cli) -> None:
    cli("memory", "add", "one", "--user", "alice", "--session", "s-1")
    info = json.loads(cli("status", "--json", "--user", "alice").stdout)
    assert info["engine"] == "embedded" and info["schema_version"] >= 1
    assert info["counts"]["memories"] == 1 and info["counts"]["sessions"] == 1


def test_status_shows_tokens_injected_today_and_per_session(cli, tmp_path: Path) -> None:
    from sessions_graph import SessionsGraph
    from sessions_graph.engines.sqlite import SQLiteEngine
    from sessions_graph.settings import Settings

    db = tmp_path / "cli.db"
    with SessionsGraph(engine=SQLiteEngine(db), settings=Settings(db=str(db))) as graph:
        for sid, tokens in (("s-1", 300), ("s-1", 100), ("s-2", 50), ("s-3", 90)):
            graph.record_session_start(sid, user_id="alice")
            graph.record_injection("alice", sid, "UserPromptSubmit", [f"turn:{tokens}"], tokens)
        graph.record_session_start("s-b", user_id="bob")
        graph.record_injection("bob", "s-b", "SessionStart", ["turn:b"], 7000)

    shown = cli("status", "--user", "alice").stdout
    assert "injected today: 540 tokens" in shown
    assert "per session:    median 90, max 400 tokens over 3 sessions" in shown
    info = json.loads(cli("status", "--json", "--user", "alice").stdout)
    assert info["injected"] == {
        "tokens_since": 540,
        "sessions": 3,
        "session_median": 90,
        "session_max": 400,
    }


def test_status_names_our_codex_hooks_at_user_scope_only(tmp_path: Path) -> None:
    """``status`` says where our Codex hooks are installed at user scope (and,
    with no codex to ask, that their trust could not be read); hooks in a
    project's ``.codex`` only are listed with the rest, not on that line."""
    from sessions_graph.hooks.install import CODEX_EVENTS, install_hooks

    codex_home, project, no_codex = tmp_path / "codex", tmp_path / "proj", tmp_path / "bin"
    for directory in (codex_home, project / ".codex", no_codex):
        directory.mkdir(parents=True)
    env = {
        **os.environ,
        "SESSIONS_GRAPH_DB": str(tmp_path / "cli.db"),
        "HOME": str(tmp_path),
        "CODEX_HOME": str(codex_home),
        "PATH": str(no_codex),  # no codex binary to ask about trust
    }

    def status() -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "sessions_graph", "status"],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    install_hooks(project / ".codex" / "hooks.json", CODEX_EVENTS, "sessions-graph hook")
    shown = status()
    assert "codex hooks:" not in shown
    assert f"project {project / '.codex' / 'hooks.json'}" in shown

    (project / ".codex" / "hooks.json").unlink()
    user_file = codex_home / "hooks.json"
    install_hooks(user_file, CODEX_EVENTS, "sessions-graph hook")
    line = next(line for line in status().splitlines() if line.startswith("codex hooks:"))
    assert line == (
        f"codex hooks:    installed in {user_file}; their trust could not be read"
        " (codex is not on PATH)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("memory", "search", "content:x", "--user", "alice"), "unsupported query syntax"),
        (("memory", "add", "   ", "--user", "alice"), "content is empty"),
        (("memory", "add", "x", "--user", "bad id"), "invalid user_id"),
        (("memory", "delete", "no-such-id"), "not found"),
        (("memory", "update", "no-such-id", "text"), "not found"),
    ],
)
def test_errors_are_one_line_and_non_zero(cli, args: tuple[str, ...], message: str) -> None:
    proc = cli(*args, expect=1)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("error: ")


def test_unwritable_database_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = subprocess.run(
        [sys.executable, "-m", "sessions_graph", "memory", "add", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SESSIONS_GRAPH_DB": str(blocker / "sub" / "x.db")},
    )
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot open database" in proc.stderr


def test_commands_act_for_one_user_only(tmp_path: Path) -> None:
    db = str(tmp_path / "two.db")

    def as_user(user: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "SESSIONS_GRAPH_DB": db, "SESSIONS_GRAPH_USER_ID": user}
        return subprocess.run(
            [sys.executable, "-m", "sessions_graph", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    alice_memory = as_user("alice", "memory", "add", "alice secret plan", "--session", "s-a").stdout
    alice_memory = alice_memory.strip()
    # bob, by default and by naming alice's session, sees and changes nothing of hers
    for args in (
        ("memory", "list", "--session", "s-a"),
        ("memory", "update", alice_memory, "hijacked"),
        ("memory", "delete", alice_memory),
        ("entities", "--session", "s-a"),
        ("forget", "--session", "s-a"),
        ("reconcile", "--session", "s-a"),
    ):
        proc = as_user("bob", *args)
        assert proc.returncode == 1, args
        assert "alice secret plan" not in proc.stdout + proc.stderr
        assert "not found" in proc.stderr
    listed = json.loads(as_user("alice", "memory", "list", "--session", "s-a", "--json").stdout)
    assert [m["content"] for m in listed] == ["alice secret plan"]


def test_memories_are_shown_redacted(cli) -> None:
    """Memories are stored as written; the CLI shows them as every read path
    does, with the secret replaced, in text and in JSON."""
    token = "ghp_" + "Abcdefghijklmnopqrstuvwxyz0123456789"
    cli("memory", "add", f"The deploy bot uses {token}", "--user", "alice")
    for args in (("memory", "list"), ("memory", "search", "deploy")):
        for fmt in ((), ("--json",)):
            out = cli(*args, "--user", "alice", *fmt).stdout
            assert "The deploy bot uses" in out and "[REDACTED:" in out
            assert token[:12] not in out
