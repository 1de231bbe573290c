"""The hook's small helpers, in-process: its log lines, the note of each
client's last event, and the environment and session of background children."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from sessions_graph.hooks.health import client_of, last_events, record
from sessions_graph.hooks.log import log_line
from sessions_graph.hooks.spawn import child_env, spawn_detached
from sessions_graph.settings import Settings


def test_a_log_message_is_cut_at_500_characters(tmp_path: Path) -> None:
    """A hostile payload must not flood the log: 500 characters are kept
    whole, a longer message ends in "..." at 500."""
    log = tmp_path / "state" / "sessions-graph.log"
    log_line(log, "INFO", "a" * 500)
    log_line(log, "WARN", "b" * 501)
    kept, cut = [line.split(" ", 3)[3] for line in log.read_text().splitlines()]
    assert kept == "a" * 500
    assert cut == "b" * 497 + "..."


def test_a_log_line_goes_to_stderr_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "sessions-graph.log"
    log_line(log, "INFO", "quiet")
    assert capsys.readouterr().err == ""
    log_line(log, "ERROR", "said\nonce", stderr=True)
    assert capsys.readouterr().err == "sessions-graph: said once\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("payload", "client"),
    [
        (None, "unknown"),
        ({"type": "agent-turn-complete"}, "codex"),
        ({"transcript_path": ""}, "unknown"),
        ({"transcript_path": 7}, "unknown"),
        ({"transcript_path": "/home/u/.claude/projects/p/s.jsonl"}, "claude-code"),
        ({"transcript_path": "/home/u/.codex/sessions/2026/11/29/rollout-x.jsonl"}, "codex"),
    ],
)
def test_the_client_of_a_payload(payload: object, client: str) -> None:
    assert client_of(payload) == client


def test_each_clients_last_event_is_a_private_note(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        record(tmp_path, "codex", "Stop", "stored 2 actions")
    finally:
        os.umask(old)
    assert last_events(tmp_path)["codex"]["outcome"] == "stored 2 actions"
    note = tmp_path / "hooks" / "last-codex.json"
    assert stat.S_IMODE(note.stat().st_mode) == 0o600
    assert stat.S_IMODE(note.parent.stat().st_mode) == 0o700


def test_a_background_child_is_told_where_the_store_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings that came from overrides, not the environment, still reach it;
    an empty one is not passed as a value."""
    monkeypatch.delenv("SESSIONS_GRAPH_MEMGRAPH_URL", raising=False)
    settings = Settings(db="/data/s.db", user_id="bob", state_dir="/state", memgraph_url="")
    env = child_env(settings, user_id="carol")
    assert (env["SESSIONS_GRAPH_DB"], env["SESSIONS_GRAPH_STATE_DIR"]) == ("/data/s.db", "/state")
    assert env["SESSIONS_GRAPH_USER_ID"] == "carol"
    assert "SESSIONS_GRAPH_MEMGRAPH_URL" not in env


def test_a_background_child_runs_in_its_own_session_and_holds_none_of_our_pipes(
    tmp_path: Path,
) -> None:
    """So that the agent's Ctrl-C, or its exit, does not end it; and so that
    a pipe the runtime handed the hook (one it waits on for end of file) is
    not held open by a reconcile run lasting minutes."""
    settings = Settings(db=str(tmp_path / "s.db"), state_dir=str(tmp_path / "state"))
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        child = spawn_detached(
            settings,
            ["-c", "import time; time.sleep(30)"],
            tmp_path / "child.log",
            dict(os.environ),
        )
    finally:
        os.close(read)
        os.close(write)
    try:
        assert os.getsid(child.pid) == child.pid != os.getsid(0)
        held = {os.readlink(fd) for fd in Path(f"/proc/{child.pid}/fd").iterdir()}
        assert not any(target.startswith("pipe:") for target in held), held
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
