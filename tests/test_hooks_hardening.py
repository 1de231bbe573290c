"""What an adversarial pass broke in capture, fixed: real hook processes, real files.

Each test starts ``python -m sessions_graph hook`` the way an agent runtime
does (JSON on stdin, ``SESSIONS_GRAPH_DB`` pointing to a temp file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.spool import pending_files
from sessions_graph.settings import load_settings

CLI = [sys.executable, "-m", "sessions_graph"]
HOOK = [*CLI, "hook"]


@pytest.fixture
def graph(db: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(engine=SQLiteEngine(db))
    yield g
    g.close()


def hook(
    payload: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        HOOK, input=payload, capture_output=True, text=True, timeout=timeout, env=env
    )


def assert_quiet(result: subprocess.CompletedProcess[str]) -> None:
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def as_user(user_id: str) -> dict[str, str]:
    return {**os.environ, "SESSIONS_GRAPH_USER_ID": user_id}


def log_lines() -> list[str]:
    path = load_settings().log_path
    return path.read_text().splitlines() if path.exists() else []


def rejected_files() -> list[Path]:
    return sorted((load_settings().spool_dir / "rejected").glob("*.json"))


# -- 1. a resumed session repeats the entries of the session it resumes ------------------
def test_a_resumed_session_repeating_earlier_entries_records_its_new_lines(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    first = ClaudeTranscript(tmp_path / "a.jsonl", "sess-a")
    first.user("build the parser")
    first.assistant("done")
    assert_quiet(hook(claude_payload("Stop", "sess-a", first.path)))
    # The resumed session's file starts with a copy of the first one.
    resumed = ClaudeTranscript(tmp_path / "b.jsonl", "sess-b")
    shutil.copyfile(first.path, resumed.path)
    resumed.user("now add tests")
    for _ in range(2):  # and every later event of it too
        result = hook(claude_payload("Stop", "sess-b", resumed.path))
        assert (result.returncode, result.stdout) == (0, "")
    assert [a.text for a in graph.get_actions("sess-b")] == ["now add tests"]
    assert [a.text for a in graph.get_actions("sess-a")] == ["build the parser", "done"]
    assert rejected_files() == [] and pending_files(load_settings()) == []
    assert any("skipped 2 actions recorded by another session" in line for line in log_lines())


# -- 2. a hook configured for another user ------------------------------------------------
def test_a_hook_for_bob_cannot_write_into_alices_session(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    mine = ClaudeTranscript(tmp_path / "alice.jsonl", "alice-s1")
    mine.user("alice's prompt")
    assert_quiet(hook(claude_payload("SessionStart", "alice-s1", mine.path)))
    assert_quiet(hook(claude_payload("Stop", "alice-s1", mine.path)))
    before = graph.get_session("alice-s1")
    cursor = graph.import_cursor("alice-s1", str(mine.path))
    assert before is not None and cursor > 0

    bobs = ClaudeTranscript(tmp_path / "bob.jsonl", "alice-s1")
    bobs.user("bob's text")
    events = [
        claude_payload("Stop", "alice-s1", bobs.path),
        claude_payload("UserPromptSubmit", "alice-s1", None, prompt="bob's prompt"),
        claude_payload("SessionEnd", "alice-s1", bobs.path),
    ]
    for payload in events:
        result = hook(payload, env=as_user("bob"))
        assert result.returncode == 0 and result.stdout == ""
        assert "not found for user 'bob'" in result.stderr and result.stderr.count("\n") == 1
    assert [a.text for a in graph.get_actions("alice-s1")] == ["alice's prompt"]
    assert graph.get_session("alice-s1") == before  # not ended, not re-queued
    assert graph.import_cursor("alice-s1", str(mine.path)) == cursor
    assert graph.import_cursor("alice-s1", str(bobs.path)) == 0
    kept = rejected_files()
    assert len(kept) == 3
    for path in kept:
        record = json.loads(path.read_text())
        assert record["user_id"] == "bob"
        assert "not found for user 'bob'" in record["reason"]
    assert pending_files(load_settings()) == []


def test_a_new_session_of_bob_cannot_take_lines_of_alices_live_transcript(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    """Claude Code names a transcript after its session: a hook for bob that
    names alice's live transcript under a session id of its own would record
    her lines not captured yet as bob's, and her own next event would then
    skip them as recorded by another session."""
    mine = ClaudeTranscript(tmp_path / "alice-s1.jsonl", "alice-s1")
    mine.user("alice's first prompt")
    assert_quiet(hook(claude_payload("Stop", "alice-s1", mine.path)))
    mine.user("alice's deploy password plan")  # not captured yet
    for event in ("SessionStart", "Stop"):
        result = hook(claude_payload(event, "bob-s9", mine.path), env=as_user("bob"))
        assert (result.returncode, result.stdout) == (0, "")
        assert "not found for user 'bob'" in result.stderr and result.stderr.count("\n") == 1
    assert graph.session_owner("bob-s9") is None
    assert_quiet(hook(claude_payload("Stop", "alice-s1", mine.path)))
    texts = [a.text for a in graph.get_actions("alice-s1")]
    assert texts == ["alice's first prompt", "alice's deploy password plan"]
    assert graph.recall("bob", "deploy password plan").hits == []


def test_naming_another_users_transcript_injects_none_of_their_context(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    """The mid-session exception records alice's own transcript into alice's
    session; it must never answer bob's hook with alice's context."""
    project = tmp_path / "orion"
    (project / ".git").mkdir(parents=True)
    mine = ClaudeTranscript(tmp_path / "alice.jsonl", "alice-s1", cwd=str(project))
    mine.user("The orion launch code is tangerine")
    start = claude_payload("SessionStart", "alice-s1", mine.path, source="startup")
    assert_quiet(hook(start.replace("/home/dev/project", str(project))))
    graph.save_memory("alice", "orion launch code: tangerine", session_id="alice-s1")
    for event, extra in (("SessionStart", {"source": "resume"}), ("UserPromptSubmit", {})):
        payload = claude_payload(event, "alice-s1", mine.path, prompt="orion launch code?", **extra)
        result = hook(payload.replace("/home/dev/project", str(project)), env=as_user("bob"))
        assert (result.returncode, result.stdout) == (0, ""), result.stdout
        assert "tangerine" not in result.stderr
    # Alice's own hook still gets her context (the look-up works at all).
    own = claude_payload("SessionStart", "alice-s2", None, source="startup")
    assert "tangerine" in hook(own.replace("/home/dev/project", str(project))).stdout


def test_a_user_id_change_right_after_session_start_still_records_the_session(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    """The runtime creates the transcript lazily: at SessionStart it may not
    exist yet. The session still knows its transcript, so a ``user_id`` changed
    before the first prompt loses nothing."""
    path = tmp_path / "late.jsonl"
    assert_quiet(hook(claude_payload("SessionStart", "s-1", path)))
    t = ClaudeTranscript(path, "s-1")
    t.user("first prompt")
    assert_quiet(hook(claude_payload("Stop", "s-1", path), env=as_user("alice-renamed")))
    assert [a.text for a in graph.get_actions("s-1")] == ["first prompt"]
    session = graph.get_session("s-1")
    assert session is not None and session.user_id == "alice"
    assert rejected_files() == []


def test_memory_add_into_another_users_session_says_not_found(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    graph.record_session_start("alice-s1", user_id="alice")
    result = subprocess.run(
        [*CLI, "memory", "add", "x", "--session", "alice-s1", "--user", "bob"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and result.stdout == ""
    assert "not found" in result.stderr and "another user" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert graph.get_memories("bob") == [] and graph.get_memories_for_session("alice-s1") == []


# -- 4. a transcript that is not a regular file --------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_transcript_that_is_not_a_regular_file_cannot_hang_the_hook(
    tmp_path: Path, graph: SessionsGraph, kind: str
) -> None:
    path = tmp_path / f"{kind}.jsonl"
    if kind == "fifo":
        os.mkfifo(path)  # nobody ever writes to it: open() for reading would block
    else:
        path.symlink_to("/dev/zero")  # endless NUL bytes, no newline
    assert_quiet(hook(claude_payload("SessionStart", "s-1", None)))
    # Before the fix the process never returned: the timeout fails the test.
    result = hook(claude_payload("SessionEnd", "s-1", path), timeout=30)
    assert result.returncode == 0 and result.stdout == ""
    assert "not a regular file" in result.stderr and result.stderr.count("\n") == 1
    session = graph.get_session("s-1")
    assert session is not None and session.ended_at is not None  # the rest applied


# -- 6. closed standard streams -------------------------------------------------------------
def _run_with_closed(fd: int, payload: str | None) -> subprocess.CompletedProcess[str]:
    """The hook with descriptor ``fd`` really closed (not /dev/null) in the child."""
    return subprocess.run(
        HOOK,
        input=payload if fd != 0 else None,
        stdin=None if fd != 0 else subprocess.DEVNULL,  # replaced by the close below
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if fd != 2 else None,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(fd),
    )


def test_with_stderr_closed_the_error_line_never_reaches_stdout(db: Path) -> None:
    result = _run_with_closed(2, "this is not json")
    assert result.returncode == 0
    assert result.stdout == ""  # Claude Code would inject it into the conversation
    assert any("payload is not JSON" in line for line in log_lines())


def test_with_stderr_closed_nothing_is_written_into_the_store_file(
    tmp_path: Path, db: Path, graph: SessionsGraph
) -> None:
    """With fd 2 closed, the next file the hook opens would get number 2: a stray
    write to "stderr" would then land in the database or the log."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(blocker / "x.db")}
    result = subprocess.run(
        HOOK,
        input=claude_payload("UserPromptSubmit", "s-1", None, prompt="kept"),
        stdout=subprocess.PIPE,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=lambda: os.close(2),
    )
    assert (result.returncode, result.stdout) == (0, "")
    assert all(line.split(" ", 1)[0][:4].isdigit() for line in log_lines())
    assert_quiet(hook(claude_payload("Stop", "s-1", None)))
    assert [a.text for a in graph.get_actions("s-1")] == ["kept"]


def test_with_stdin_closed_the_hook_logs_an_empty_payload(db: Path) -> None:
    result = _run_with_closed(0, None)
    assert (result.returncode, result.stdout) == (0, "")
    assert "AttributeError" not in result.stderr and result.stderr.count("\n") == 1
    lines = log_lines()
    assert len(lines) == 1 and "no payload on stdin" in lines[0]


# -- 3. a transcript rewritten longer than the cursor ------------------------------------
def test_a_transcript_rewritten_longer_than_the_cursor_is_read_again(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s-1")
    first, second = t.user("first prompt"), t.assistant("first answer")
    assert_quiet(hook(claude_payload("Stop", "s-1", t.path)))
    # The file is rewritten: an entry appears before the cursor, and one after.
    inserted = t._entry("user", "a line inserted before the cursor")
    later = t._entry("assistant", "a line after it")
    t.path.write_text("".join(json.dumps(e) + "\n" for e in (first, inserted, second, later)))
    assert_quiet(hook(claude_payload("Stop", "s-1", t.path)))
    texts = [a.text for a in graph.get_actions("s-1")]
    assert sorted(texts) == sorted(
        ["first prompt", "first answer", "a line inserted before the cursor", "a line after it"]
    )  # nothing lost, nothing doubled
    assert texts[:2] == ["first prompt", "first answer"]
    assert any("read again from its start" in line for line in log_lines())
    assert graph.import_cursor("s-1", str(t.path)) == t.path.stat().st_size
    # An append after that is read from the new cursor as usual.
    t.user("more")
    assert_quiet(hook(claude_payload("Stop", "s-1", t.path)))
    assert [a.text for a in graph.get_actions("s-1")][-1] == "more"
    assert len(graph.get_actions("s-1")) == 5


# -- 16. auto_reconcile after a mid-session user_id change -----------------------------
def test_auto_reconcile_after_a_user_id_change_runs_for_the_sessions_owner(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    t = ClaudeTranscript(tmp_path / "s.jsonl", "own-1")
    t.user("Deploy Orion to Staging")
    assert_quiet(hook(claude_payload("SessionStart", "own-1", t.path)))
    t.assistant("Orion runs on Staging now")
    changed = {
        **as_user("alice2"),
        "SESSIONS_GRAPH_AUTO_RECONCILE": "1",
        "SESSIONS_GRAPH_LLM_FUNC": "reconcile_scripted:slow_llm",
        "SCRIPTED_LLM_DELAY": "0",
        "PYTHONPATH": str(Path(__file__).parent),
    }
    assert_quiet(hook(claude_payload("SessionEnd", "own-1", t.path), env=changed))
    deadline = time.monotonic() + 120
    status = None
    while time.monotonic() < deadline:
        session = graph.get_session("own-1")
        status = session.reconciliation_status if session else None
        if status in ("reconciled", "failed"):
            break
        time.sleep(0.2)
    log = (Path(load_settings().state_dir) / "reconcile.log").read_text()
    assert status == "reconciled", log
    assert "not found" not in log
    assert {e.name for e in graph.session_entities("own-1")} >= {"Orion", "Staging"}


# -- 5. a locked store, a long spool ----------------------------------------------------
HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(300)
"""


def wait_for_the_spool(timeout: float = 300) -> None:
    """Until background replays have applied every spooled event."""
    from sessions_graph.hooks.spool import spool_is_empty

    settings = load_settings()
    deadline = time.monotonic() + timeout
    while not spool_is_empty(settings) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert spool_is_empty(settings)


def test_a_locked_store_costs_the_hook_a_moment_not_the_busy_timeout(
    tmp_path: Path, db: Path, graph: SessionsGraph
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        payload = claude_payload("UserPromptSubmit", "s-1", None, prompt="while locked")
        # Before the fix the hook waited the 30 s busy timeout: the timeout fails it.
        assert_quiet(hook(payload, timeout=20))
        assert "store busy" in log_lines()[-1] and "background replay" in log_lines()[-1]
        # The next event, still locked out, queues behind it.
        assert_quiet(hook(claude_payload("Stop", "s-1", None), timeout=20))
    finally:
        holder.kill()
        holder.wait()
    assert_quiet(hook(claude_payload("UserPromptSubmit", "s-1", None, prompt="after")))
    wait_for_the_spool()
    assert [a.text for a in graph.get_actions("s-1")] == ["while locked", "after"]
    session = graph.get_session("s-1")
    assert session is not None and session.reconciliation_status == "pending"
    assert not (load_settings().spool_dir / "rejected").exists()


def test_a_long_spool_is_drained_in_the_background_in_order(
    tmp_path: Path, db: Path, graph: SessionsGraph
) -> None:
    from sessions_graph.hooks.spool import spool_payload

    settings = load_settings()
    count = 2000  # about 3 ms each: several seconds, far past the hook's budget
    for n in range(count):
        payload = claude_payload("UserPromptSubmit", "s-1", None, prompt=f"p{n}")
        spool_payload(settings, json.loads(payload), user_id="alice")
    result = hook(claude_payload("UserPromptSubmit", "s-1", None, prompt="last"))
    assert_quiet(result)
    # The hook applied part of the spool at most, queued its own event behind
    # the rest, and left them to a background replay.
    assert any("queued behind" in line for line in log_lines())
    wait_for_the_spool()
    texts = [a.text for a in graph.get_actions("s-1")]
    assert texts == [f"p{n}" for n in range(count)] + ["last"]  # in order, each once
    assert not (settings.spool_dir / "rejected").exists()


# -- a state directory the hook cannot use ----------------------------------------------
def test_a_state_dir_that_is_a_file_still_records_the_event(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    # The spool cannot be read there, but the store is fine: the event is
    # recorded rather than lost, and the hook stays quiet but for one line.
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    env = {**os.environ, "SESSIONS_GRAPH_STATE_DIR": str(blocker)}
    body = {"hook_event_name": "SessionStart", "session_id": "s-nostate", "cwd": str(tmp_path)}
    result = hook(json.dumps(body), env=env)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.count("\n") <= 1
    assert graph.get_session("s-nostate") is not None


# -- a full disk leaves no temp files in the spool -----------------------------------------
def test_a_full_disk_leaves_no_temp_files_in_the_spool(tmp_path: Path, db: Path) -> None:
    import resource

    spool = load_settings().spool_dir
    spool.mkdir(parents=True)
    # One left by an older version on a full disk, long ago.
    stale = spool / ".01700000000000000000-00000001-0001.json.tmp"
    stale.write_bytes(b"")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    (tmp_path / "file").write_text("")
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "file" / "store.db")}
    event = json.dumps({"session_id": "s-1", "hook_event_name": "Stop", "cwd": "/x"})

    def disk_full() -> None:  # no file may grow: as good as a full disk for a write
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    for _ in range(3):
        result = subprocess.run(
            HOOK, input=event, capture_output=True, text=True, env=down, preexec_fn=disk_full
        )
        assert result.returncode == 0 and result.stdout == ""
        assert result.stderr.count("\n") <= 1
    assert sorted(p.name for p in spool.iterdir() if p.name.endswith(".tmp")) == [stale.name]
    # The disk has room again: the next replay (here the cron's reconcile run)
    # clears what is stale.
    swept = subprocess.run([*CLI, "reconcile", "--pending"], capture_output=True, text=True)
    assert swept.returncode == 0, swept.stderr
    assert [p.name for p in spool.iterdir() if p.name.endswith(".tmp")] == []


# -- the payload size limit ----------------------------------------------------------------
def test_a_payload_of_exactly_the_size_limit_is_recorded_and_one_byte_more_is_refused(
    graph: SessionsGraph,
) -> None:
    """The documented limit (docs/hooks.md) is on the bytes on stdin: a
    payload of exactly 32 MiB is an event like any other; one byte more is
    refused whole (not cut and parsed), with one line that says why."""
    limit = 32 * 1024 * 1024

    def padded(session_id: str, size: int) -> str:
        # JSON allows whitespace after the value: the event stays small.
        body = claude_payload("UserPromptSubmit", session_id, None, prompt="sized prompt")
        return body + " " * (size - len(body.encode()))

    result = hook(padded("s-limit", limit))
    assert (result.returncode, result.stdout) == (0, "")
    # (On a busy machine, reading 32 MiB may leave no time to inject: one line says so.)
    assert "rejected" not in result.stderr and "larger" not in result.stderr
    assert [a.text for a in graph.get_actions("s-limit")] == ["sized prompt"]
    result = hook(padded("s-over", limit + 1))
    assert (result.returncode, result.stdout) == (0, "")
    assert f"payload larger than {limit} bytes" in result.stderr
    assert result.stderr.count("\n") == 1
    assert graph.get_session("s-over") is None and pending_files(load_settings()) == []
