"""``sessions-graph import``: agent history loaded with the hook path's ids and times.

Transcripts are written in the runtimes' own shapes (``test_hooks_helpers``);
the hook path runs as real ``sessions-graph hook`` processes, and the import
both in-process and as a real ``sessions-graph import`` process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload, codex_rollout_lines

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.errors import MemoryValidationError
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks import history, transcript
from sessions_graph.project import project_key
from sessions_graph.settings import Settings

CLI = [sys.executable, "-m", "sessions_graph"]
CLAUDE_SID = "9f3c1e52-7a4b-4c1d-9e8f-2b6a0d4c7e11"
CODEX_SID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch HOME holding the runtimes' history directories, and a store."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("SESSIONS_GRAPH_DB", str(tmp_path / "store.db"))
    monkeypatch.setenv("SESSIONS_GRAPH_USER_ID", "alice")
    return home


@pytest.fixture
def graph(home: Path, tmp_path: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(
        engine=SQLiteEngine(tmp_path / "store.db"), settings=Settings(user_id="alice")
    )
    g.setup()
    yield g
    g.close()


def claude_session(
    home: Path, sid: str = CLAUDE_SID, turns: int = 3
) -> tuple[ClaudeTranscript, list[str]]:
    """A Claude Code transcript where Claude Code keeps it, and its action ids."""
    path = home / ".claude" / "projects" / "-home-dev-project" / f"{sid}.jsonl"
    t = ClaudeTranscript(path, sid)
    t.noise()  # summaries and file snapshots come before the first message
    expected: list[str] = []
    for n in range(turns):
        expected.append(t.user(f"Why does step {n} of the build fail?")["uuid"])
        _, call, result = t.tool_use("Bash", {"command": f"make step{n}"}, f"error in step {n}")
        expected += [f"{call}:1", result]
        expected.append(t.assistant(f"Step {n} needs the cache warmed first.")["uuid"])
    return t, expected


def codex_session(home: Path, sid: str = CODEX_SID) -> Path:
    path = (
        home
        / ".codex"
        / "sessions"
        / "2026"
        / "10"
        / "02"
        / f"rollout-2026-10-02T08-15-00-{sid}.jsonl"
    )
    path.parent.mkdir(parents=True)
    lines = codex_rollout_lines(sid)
    for n, line in enumerate(lines):  # a session that lasted a few seconds, a month ago
        line["timestamp"] = f"2026-10-02T08:15:{n:02d}.000Z"
    lines[0]["payload"]["timestamp"] = "2026-10-02T08:15:00.000Z"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def hook(payload: str) -> None:
    result = subprocess.run(
        [*CLI, "hook"], input=payload, capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def run_import(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "import", *args], capture_output=True, text=True, timeout=120, env=env
    )


# -- in process ---------------------------------------------------------------------
def test_claude_history_is_imported_with_its_times(home: Path, graph: SessionsGraph) -> None:
    t, expected = claude_session(home)
    summary = history.import_history(graph, history.find_transcripts([t.path]), "alice")
    assert (summary.files, summary.sessions, summary.added, summary.skipped) == (1, 1, 12, 0)
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == expected
    session = graph.get_session(CLAUDE_SID)
    assert session is not None and session.user_id == "alice"
    # Dated by its first entry (the summary lines before it carry no time).
    assert session.started_at == "2026-11-29T10:00:01.000000+00:00"
    assert session.cwd == "/home/dev/project" and session.project_key == "/home/dev/project"
    assert graph.get_actions(CLAUDE_SID)[0].timestamp == "2026-11-29T10:00:01.000000+00:00"
    assert session.reconciliation_status == "pending"  # queued, as a turn end would
    # The cursor is where the hook path would have left it: at the end.
    assert graph.import_cursor(CLAUDE_SID, str(t.path)) == t.path.stat().st_size
    again = history.import_history(graph, [t.path], "alice")
    assert (again.sessions, again.added) == (1, 0)
    assert len(graph.get_actions(CLAUDE_SID)) == 12


def test_a_long_transcript_is_read_window_by_window(
    home: Path, graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, expected = claude_session(home, turns=40)
    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 4096)  # one hook call reads 4 KB
    result = history.import_file(graph, t.path, "alice")
    assert result.added == len(expected) == 160 and not result.error
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == expected


def test_codex_rollout_gets_the_hook_paths_ids(
    home: Path, graph: SessionsGraph, tmp_path: Path
) -> None:
    path = codex_session(home)
    summary = history.import_history(graph, history.find_transcripts([home / ".codex"]), "alice")
    assert (summary.sessions, summary.added) == (1, 5)
    session = graph.get_session(CODEX_SID)
    assert session is not None and session.started_at == "2026-10-02T08:15:00.000000+00:00"
    assert session.cwd == "/home/dev/project"
    # The ids a hook would have stored for this rollout (they hash session and offset).
    ids = [a["action_id"] for a in transcript.import_actions(path, 0, CODEX_SID).actions]
    assert [a.action_id for a in graph.get_actions(CODEX_SID)] == ids


def test_legacy_codex_rollout_takes_its_id_from_the_first_line(
    home: Path, graph: SessionsGraph
) -> None:
    path = home / "old" / "rollout-2025-05-01-legacy.jsonl"
    path.parent.mkdir()
    lines = [
        {"id": "legacy-1", "timestamp": "2025-05-01T12:00:00.000Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"record_type": "state"},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    result = history.import_file(graph, path, "alice")
    assert (result.session_id, result.added) == ("legacy-1", 1)
    assert graph.get_session("legacy-1").started_at.startswith("2025-05-01T12:00:00")  # type: ignore[union-attr]


def test_another_users_session_is_skipped_and_left_alone(home: Path, graph: SessionsGraph) -> None:
    t, _ = claude_session(home)
    graph.record_session_start(CLAUDE_SID, user_id="bob")
    graph.record_actions(CLAUDE_SID, [{"action_id": "b-1", "action_type": "user_message"}])
    summary = history.import_history(graph, [t.path], "alice")
    assert (summary.files, summary.sessions, summary.added) == (1, 0, 0)
    assert (summary.skipped, summary.other_user) == (1, 1)
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == ["b-1"]
    assert graph.session_owner(CLAUDE_SID) == "bob"
    assert graph.import_cursor(CLAUDE_SID, str(t.path)) == 0
    assert "another user" in summary.line() and "bob" not in summary.line()


def test_what_is_not_a_main_conversation_is_skipped(home: Path, graph: SessionsGraph) -> None:
    project = home / ".claude" / "projects" / "-home-dev-project"
    sub = ClaudeTranscript(project / "agent-1a2b3c4d.jsonl", CLAUDE_SID)
    entry = sub._entry("user", "Search the repo for TODOs", isSidechain=True)
    sub.append(entry)
    only_summaries = ClaudeTranscript(project / "summaries.jsonl", "x")
    only_summaries.noise()
    (project / "empty.jsonl").write_text("")
    results = [history.import_file(graph, p, "alice") for p in history.find_transcripts([project])]
    assert all(r.skipped and not r.added for r in results), results
    assert graph.get_session(CLAUDE_SID) is None


def test_bad_paths_are_refused_before_anything_is_read(home: Path) -> None:
    (home / "notes.txt").write_text("x")
    with pytest.raises(Exception, match="no such file or directory"):
        history.find_transcripts([home / "missing"])
    with pytest.raises(Exception, match=r"not a \.jsonl"):
        history.find_transcripts([home / "notes.txt"])


def test_an_empty_path_or_a_special_file_is_refused_by_name(
    home: Path, graph: SessionsGraph
) -> None:
    # "" would otherwise be the current directory, imported recursively.
    with pytest.raises(MemoryValidationError, match="empty path"):
        history.find_transcripts([""])
    fifo = home / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(MemoryValidationError, match="not a regular file"):
        history.find_transcripts([fifo])
    result = run_import("")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: empty path: name a transcript file or directory\n"
    assert graph.engine.status()["counts"]["sessions"] == 0


# -- with the hooks, as real processes ----------------------------------------------
def test_import_after_hooks_and_hooks_after_import_store_nothing_twice(
    home: Path, graph: SessionsGraph
) -> None:
    t, expected = claude_session(home, turns=2)
    # Hooks saw the first half of the session...
    hook(claude_payload("SessionStart", CLAUDE_SID, t.path, source="startup"))
    hook(claude_payload("Stop", CLAUDE_SID, t.path))
    hooked = [a.action_id for a in graph.get_actions(CLAUDE_SID)]
    assert hooked == expected
    started_by_hook = graph.get_session(CLAUDE_SID).started_at  # type: ignore[union-attr]
    # ...then the session went on, and the user imported their history.
    more = [t.user("And the deploy?")["uuid"], t.assistant("Deploy is green.")["uuid"]]
    result = run_import()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "imported 1 file: 1 session, 2 new actions, 0 skipped"
    assert result.stderr == ""
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == expected + more
    session = graph.get_session(CLAUDE_SID)
    assert session is not None and session.started_at < started_by_hook  # type: ignore[operator]
    assert session.started_at == "2026-11-29T10:00:01.000000+00:00"
    # A hook after the import continues at the import's cursor.
    last = t.assistant("Anything else?")["uuid"]
    hook(claude_payload("Stop", CLAUDE_SID, t.path))
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == [*expected, *more, last]
    assert run_import().stdout.strip() == "imported 1 file: 1 session, 0 new actions, 0 skipped"


def test_codex_hooks_then_import(home: Path, graph: SessionsGraph) -> None:
    path = codex_session(home)
    base = {"session_id": CODEX_SID, "cwd": "/home/dev/project", "transcript_path": str(path)}
    hook(json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}))
    hook(json.dumps({**base, "hook_event_name": "Stop"}))
    assert len(graph.get_actions(CODEX_SID)) == 5
    result = run_import(str(home / ".codex"), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "files": 1,
        "sessions": 1,
        "added": 0,
        "skipped": 0,
        "other_user": 0,
        "failed": 0,
        "foreign": 0,
    }
    assert len(graph.get_actions(CODEX_SID)) == 5


# -- the command ----------------------------------------------------------------------
def test_import_command_for_a_user_reports_what_it_skipped(
    home: Path, graph: SessionsGraph
) -> None:
    claude_session(home)
    codex_session(home)
    bob_sid = "3b9d2f10-0c5e-4a7b-8d21-6f4e9a1b2c3d"
    _, _ = claude_session(home, sid=bob_sid, turns=1)
    graph.record_session_start(bob_sid, user_id="bob")
    result = run_import("--user", "carol")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "imported 3 files: 2 sessions, 17 new actions, 1 skipped (1 of another user)"
    )
    lines = result.stderr.splitlines()
    assert lines == [
        f"skipped ~/.claude/projects/-home-dev-project/{bob_sid}.jsonl:"
        " the session belongs to another user"
    ]
    assert graph.session_owner(CLAUDE_SID) == graph.session_owner(CODEX_SID) == "carol"
    assert graph.get_actions(bob_sid) == []


def test_import_command_errors_are_one_line(home: Path, tmp_path: Path) -> None:
    result = run_import()  # nothing in ~/.claude or ~/.codex
    assert result.returncode == 1 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: no agent history found in ")
    result = run_import(str(tmp_path / "nope"))
    assert (result.returncode, result.stderr) == (
        1,
        f"error: no such file or directory: {tmp_path / 'nope'}\n",
    )
    result = run_import("--user", "not a user")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert "invalid user_id" in result.stderr


def test_an_unreadable_transcript_fails_its_file_only(home: Path, graph: SessionsGraph) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    t, _ = claude_session(home)
    codex_session(home)
    t.path.chmod(0)
    result = run_import()
    assert result.returncode == 1
    assert (
        result.stdout.strip() == "imported 2 files: 1 session, 5 new actions, 0 skipped, 1 failed"
    )
    assert len(result.stderr.splitlines()) == 1 and "cannot read transcript" in result.stderr


def test_a_transcript_that_vanishes_fails_its_file_only(home: Path, graph: SessionsGraph) -> None:
    t, _ = claude_session(home)
    path = codex_session(home)
    files = history.find_transcripts([home / ".claude", home / ".codex"])
    t.path.unlink()  # deleted between discovery and import
    summary = history.import_history(graph, files, "alice")
    assert (summary.files, summary.sessions, summary.added, summary.failed) == (2, 1, 5, 1)
    assert summary.line() == "imported 2 files: 1 session, 5 new actions, 0 skipped, 1 failed"
    assert graph.get_session(CLAUDE_SID) is None and graph.session_owner(CODEX_SID) == "alice"
    assert path.exists()


def test_a_resumed_session_keeps_only_what_is_new(home: Path, graph: SessionsGraph) -> None:
    t, expected = claude_session(home)
    # Resuming copies the earlier entries into the new session's transcript,
    # then appends the new turns. Its file name sorts first: order by age.
    resumed_sid = "0c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5"
    resumed = ClaudeTranscript(t.path.with_name(f"{resumed_sid}.jsonl"), resumed_sid)
    resumed.path.write_bytes(t.path.read_bytes())
    os.utime(t.path, (1_700_000_000, 1_700_000_000))  # written before the copy
    resumed.seconds = t.seconds
    new = [resumed.user("And now the deploy?")["uuid"], resumed.assistant("Deployed.")["uuid"]]
    summary = history.import_history(graph, history.find_transcripts([home]), "alice")
    assert (summary.files, summary.sessions, summary.added, summary.foreign) == (2, 2, 14, 12)
    assert summary.line() == (
        "imported 2 files: 2 sessions, 14 new actions, 0 skipped;"
        " 12 actions were already another session's (resumed sessions)"
    )
    assert [a.action_id for a in graph.get_actions(CLAUDE_SID)] == expected
    assert [a.action_id for a in graph.get_actions(resumed_sid)] == new


def test_a_file_the_store_refuses_fails_alone(home: Path, graph: SessionsGraph) -> None:
    claude_session(home)
    codex_session(home)
    project = home / ".claude" / "projects" / "-home-dev-project"
    long_cwd = ClaudeTranscript(project / "s-long.jsonl", "s-long", cwd="/x" * 3000)
    long_cwd.user("hello")
    summary = history.import_history(graph, history.find_transcripts([home]), "alice")
    assert (summary.files, summary.sessions, summary.failed) == (3, 2, 1)
    assert summary.added == 12 + 5
    assert graph.get_actions("s-long") == []
    assert project_key("/x" * 3000) == "/x" * 3000  # too long for the OS to look up: no crash


def test_claude_config_dir_and_codex_home_are_honoured(
    home: Path, graph: SessionsGraph, tmp_path: Path
) -> None:
    t, _ = claude_session(home)
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(tmp_path / "none"),
    }
    result = run_import(env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("imported 1 file: 1 session, 12 new actions")
    assert graph.import_cursor(CLAUDE_SID, str(t.path)) == t.path.stat().st_size


def test_a_line_longer_than_the_head_window_is_stepped_over(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding a file's session reads bounded pieces: an over-long first line
    (a huge tool result) is skipped, and the lines after it still count."""
    path = home / "rollout-2026-11-29T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    meta = {
        "type": "session_meta",
        "timestamp": "2026-11-29T10:00:00Z",
        "payload": {"id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "cwd": "/src/orion"},
    }
    long_line = json.dumps({"type": "event_msg", "payload": {"text": "x" * 5000}})
    path.write_text(long_line + "\n" + json.dumps(meta) + "\n", encoding="utf-8")
    monkeypatch.setattr(history, "HEAD_LINE_BYTES", 1000)
    head = history.read_head(path)
    assert head.session_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert head.cwd == "/src/orion"


# -- a last line without its newline --------------------------------------------------
def test_a_complete_last_line_without_a_newline_is_imported(home: Path, tmp_path: Path) -> None:
    t, _ = claude_session(home, turns=1)
    t.path.write_bytes(t.path.read_bytes().rstrip(b"\n"))  # an editor's save, a copy
    for _ in range(2):  # and importing again neither loses nor doubles it
        assert run_import(str(t.path)).returncode == 0
        with SessionsGraph(db=str(tmp_path / "store.db")) as graph:
            assert [a.text for a in graph.get_actions(CLAUDE_SID)][-1] == (
                "Step 0 needs the cache warmed first."
            )
            assert len(graph.get_actions(CLAUDE_SID)) == 4
    # The runtime goes on writing: its next entry starts with the newline.
    entry = t._entry("user", "and step 1?")
    with open(t.path, "a", encoding="utf-8") as fh:
        fh.write("\n" + json.dumps(entry) + "\n")
    assert run_import(str(t.path)).returncode == 0
    with SessionsGraph(db=str(tmp_path / "store.db")) as graph:
        assert [a.text for a in graph.get_actions(CLAUDE_SID)][-2:] == [
            "Step 0 needs the cache warmed first.",
            "and step 1?",
        ]
        assert len(graph.get_actions(CLAUDE_SID)) == 5


def test_a_last_line_still_being_written_waits_for_its_end(home: Path, tmp_path: Path) -> None:
    t, _ = claude_session(home, turns=1)
    whole = t.path.read_bytes()
    t.path.write_bytes(whole[: len(whole) - 20])  # the last entry is half written
    hook(claude_payload("Stop", CLAUDE_SID, t.path))
    with SessionsGraph(db=str(tmp_path / "store.db")) as graph:
        assert len(graph.get_actions(CLAUDE_SID)) == 3
    t.path.write_bytes(whole)
    hook(claude_payload("Stop", CLAUDE_SID, t.path))
    with SessionsGraph(db=str(tmp_path / "store.db")) as graph:
        assert [a.text for a in graph.get_actions(CLAUDE_SID)][-1] == (
            "Step 0 needs the cache warmed first."
        )
        assert len(graph.get_actions(CLAUDE_SID)) == 4


def test_a_claude_session_begins_at_its_first_dated_entry_even_a_queued_prompt(
    home: Path, graph: SessionsGraph
) -> None:
    """A prompt typed while Claude Code was busy is queued: the queue entry
    (no uuid of its own) comes first, with the time the user typed it."""
    path = home / ".claude" / "projects" / "-home-dev-project" / f"{CLAUDE_SID}.jsonl"
    t = ClaudeTranscript(path, CLAUDE_SID)
    t.append(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "sessionId": CLAUDE_SID,
            "timestamp": "2026-11-29T09:59:00.000Z",
            "content": "Why does the build fail?",
        }
    )
    t.user("Why does the build fail?")
    summary = history.import_history(graph, [path], "alice")
    assert (summary.sessions, summary.added) == (1, 1)
    session = graph.get_session(CLAUDE_SID)
    assert session is not None and session.started_at == "2026-11-29T09:59:00.000000+00:00"
