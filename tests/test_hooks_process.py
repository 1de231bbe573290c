"""``sessions-graph hook`` as agents run it: real processes, real files.

Each event is a fresh ``python -m sessions_graph hook`` process with the JSON
on stdin and ``SESSIONS_GRAPH_DB`` pointing to a temp file, exactly like a
hook runtime would start it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.replay import replay_spool
from sessions_graph.hooks.spool import pending_files, spool_is_empty
from sessions_graph.settings import Settings, load_settings

HOOK = [sys.executable, "-m", "sessions_graph", "hook"]


@pytest.fixture
def db(db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # These tests are about capture; what the hook injects is tested in test_hooks_inject.
    monkeypatch.setenv("SESSIONS_GRAPH_INJECT_SESSION_START_TOKENS", "0")
    monkeypatch.setenv("SESSIONS_GRAPH_INJECT_PROMPT_TOKENS", "0")
    return db


@pytest.fixture
def store(db: Path) -> Iterator[SQLiteEngine]:
    engine = SQLiteEngine(db)
    yield engine
    engine.close()


def hook(
    payload: str | bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    data = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    return subprocess.run(HOOK, input=data, capture_output=True, text=True, timeout=60, env=env)


def assert_quiet(result: subprocess.CompletedProcess[str]) -> None:
    """Success: exit 0, nothing on stdout (Claude Code would inject it), nothing on stderr."""
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def wait_for_background_replay(settings: Settings, timeout: float = 60) -> None:
    """Wait until the spool is empty and no drain runs (a deadlock guard,
    not a speed goal)."""
    from sessions_graph.hooks.spool import replay_running

    deadline = time.monotonic() + timeout
    while not spool_is_empty(settings) or replay_running(settings):
        assert time.monotonic() < deadline, "the background replay did not finish"
        time.sleep(0.05)


def log_lines() -> list[str]:
    path = load_settings().log_path
    return path.read_text().splitlines() if path.exists() else []


def test_recorded_claude_code_session(tmp_path: Path, db: Path, store: SQLiteEngine) -> None:
    sid = "9f3c1e52-7a4b-4c1d-9e8f-2b6a0d4c7e11"
    t = ClaudeTranscript(tmp_path / "projects" / "-home-dev-project" / f"{sid}.jsonl", sid)
    expected: list[str] = []

    assert_quiet(hook(claude_payload("SessionStart", sid, t.path, source="startup")))
    t.noise()
    prompts = ["Why does the build fail?", "Fix it please", "Now run the tests"]
    for n, prompt in enumerate(prompts):
        entry = t.user(prompt)
        expected.append(entry["uuid"])
        assert_quiet(hook(claude_payload("UserPromptSubmit", sid, t.path, prompt=prompt)))
        tool_input = {"command": f"make step{n}"}
        tool_id, call_uuid, result_uuid = t.tool_use("Bash", tool_input, f"output {n}")
        expected += [f"{call_uuid}:1", result_uuid]
        assert_quiet(
            hook(
                claude_payload(
                    "PostToolUse",
                    sid,
                    t.path,
                    tool_name="Bash",
                    tool_input=tool_input,
                    tool_response={"stdout": f"output {n}", "stderr": "", "tool_use_id": tool_id},
                )
            )
        )
        expected.append(t.assistant(f"Answer {n}")["uuid"])
        assert_quiet(hook(claude_payload("Stop", sid, t.path, stop_hook_active=False)))
    assert_quiet(hook(claude_payload("PreCompact", sid, t.path, trigger="auto")))

    graph = SessionsGraph(engine=store)
    actions = graph.get_actions(sid)
    assert [a.action_id for a in actions] == expected  # in order, each exactly once
    kinds = [a.action_type for a in actions]
    assert kinds == ["user_message", "tool_call", "tool_result", "assistant_message"] * 3
    assert [a.text for a in actions if a.action_type == "user_message"] == prompts
    session = graph.get_session(sid)
    assert session is not None and session.user_id == "alice"
    assert session.cwd == "/home/dev/project" and session.project_key == "/home/dev/project"
    assert sid in [s.session_id for s in graph.pending_sessions()]

    # Stop again: nothing new to import, nothing doubled.
    assert_quiet(hook(claude_payload("Stop", sid, t.path)))
    assert log_lines()[-1].endswith(f"Stop session={sid} new_actions=0")
    assert_quiet(hook(claude_payload("SessionEnd", sid, t.path, reason="prompt_input_exit")))
    assert len(graph.get_actions(sid)) == len(expected)
    ended = graph.get_session(sid)
    assert ended is not None and ended.ended_at is not None
    assert ended.reconciliation_status == "pending"
    assert not pending_files(load_settings())


def test_sixteen_concurrent_hook_processes(tmp_path: Path, db: Path, store: SQLiteEngine) -> None:
    """16 processes at once, each importing 50 new transcript lines; then 48 more
    racing three to a session over the next 50 lines. Each event lands once."""
    store.close()  # the processes create the schema themselves, concurrently
    transcripts = []
    for w in range(16):
        t = ClaudeTranscript(tmp_path / f"w{w}.jsonl", f"sess-{w}")
        for i in range(50):
            t.user(f"worker {w} message {i}") if i % 2 == 0 else t.assistant(f"reply {w}.{i}")
        transcripts.append(t)

    def run_all(copies: int) -> None:
        # Payloads come from files so that every process starts at once.
        inputs = []
        for t in transcripts:
            path = t.path.with_suffix(".payload")
            path.write_text(claude_payload("Stop", t.session_id, t.path))
            inputs += [path] * copies
        procs = []
        for path in inputs:
            with open(path, "rb") as stdin:
                procs.append(
                    subprocess.Popen(
                        HOOK, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                    )
                )
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert (proc.returncode, out, err) == (0, b"", b"")

    run_all(1)
    for w, t in enumerate(transcripts):
        for i in range(50, 100):
            t.user(f"worker {w} message {i}") if i % 2 == 0 else t.assistant(f"reply {w}.{i}")
    run_all(3)

    settings = load_settings()
    # A hook that found the store locked past its budget left its event to a
    # background replay (quietly: nothing is lost); wait for it.
    deadline = time.monotonic() + 120
    while not spool_is_empty(settings) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not pending_files(settings), "everything spooled must have been replayed"
    graph = SessionsGraph(engine=SQLiteEngine(db))
    for w, t in enumerate(transcripts):
        actions = graph.get_actions(t.session_id)
        assert len(actions) == 100
        texts = [a.text for a in actions]
        assert texts == [
            f"worker {w} message {i}" if i % 2 == 0 else f"reply {w}.{i}" for i in range(100)
        ]
    assert len(graph.pending_sessions()) == 16
    graph.close()


def test_store_unavailable_spools_then_replays(tmp_path: Path, store: SQLiteEngine) -> None:
    sid = "s-offline"
    t = ClaudeTranscript(tmp_path / f"{sid}.jsonl", sid)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a regular file where a directory should be")
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(blocker / "sessions.db")}

    payloads = [claude_payload("SessionStart", sid, t.path, source="startup")]
    t.user("first prompt")
    t.assistant("first answer")
    payloads.append(claude_payload("Stop", sid, t.path))
    # A prompt with no transcript is only in the payload: spooling must keep it.
    payloads.append(claude_payload("UserPromptSubmit", sid, None, prompt="typed while offline"))
    for payload in payloads:
        result = hook(payload, env=down)
        assert result.returncode == 0 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and "spooled" in result.stderr
        assert "Traceback" not in result.stderr
    settings = load_settings()
    spooled = pending_files(settings)
    assert len(spooled) == 3 and spooled == sorted(spooled)

    # The store is back: the next hook call replays the spool before its own event.
    assert_quiet(hook(claude_payload("SessionStart", "s-other", None)))
    assert not pending_files(settings)
    graph = SessionsGraph(engine=store)
    assert [a.text for a in graph.get_actions(sid)] == [
        "first prompt",
        "first answer",
        "typed while offline",
    ]
    assert graph.get_session(sid) is not None and graph.get_session("s-other") is not None
    assert sid in [s.session_id for s in graph.pending_sessions()]

    # Replaying the same events again (a double replay) doubles nothing.
    for payload in payloads:
        assert_quiet(hook(payload))
    assert len(graph.get_actions(sid)) == 3


def test_replay_spool_for_reconcile_runs(tmp_path: Path, store: SQLiteEngine) -> None:
    """The function the reconcile CLI calls: claims, applies, rejects bad files."""
    settings = load_settings()
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "f" / "x.db")}
    (tmp_path / "f").write_text("")
    assert (
        hook(claude_payload("UserPromptSubmit", "s-1", None, prompt="hi"), env=down).returncode == 0
    )
    settings.spool_dir.joinpath("00000000000000000001-bad.json").write_text("{broken")
    graph = SessionsGraph(engine=store, settings=settings)
    assert replay_spool(graph, settings) == 1
    assert [a.text for a in graph.get_actions("s-1")] == ["hi"]
    assert not pending_files(settings)
    assert [p.name for p in (settings.spool_dir / "rejected").iterdir()] == [
        "00000000000000000001-bad.json"
    ]
    assert replay_spool(graph, settings) == 0


HOSTILE = {
    "not json": b"this is not json",
    "empty stdin": b"",
    "json array": b"[1, 2, 3]",
    "missing fields": b"{}",
    "missing session": json.dumps({"hook_event_name": "Stop"}).encode(),
    "control chars": json.dumps(
        {"hook_event_name": "Stop", "session_id": "abc\x00\x1b[2J"}
    ).encode(),
    "sql": json.dumps(
        {"hook_event_name": "Stop", "session_id": "x'; DROP TABLE sessions; --"}
    ).encode(),
    "cypher": json.dumps(
        {"hook_event_name": "Stop", "session_id": "}) DETACH DELETE n //"}
    ).encode(),
    "event name": json.dumps({"hook_event_name": "Stop\nINFO forged", "session_id": "s1"}).encode(),
    "huge id": json.dumps({"hook_event_name": "Stop", "session_id": "a" * 1_000_000}).encode(),
    "nested": b'{"hook_event_name": "Stop", "session_id": '
    + b"[" * 200_000
    + b"]" * 200_000
    + b"}",
    "cwd type": json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": {}}
    ).encode(),
}


@pytest.mark.parametrize("payload", list(HOSTILE.values()), ids=list(HOSTILE))
def test_malformed_and_hostile_payloads(payload: bytes, db: Path) -> None:
    result = hook(payload)
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    lines = log_lines()
    assert len(lines) == 1 and "rejected" in lines[0]
    assert not pending_files(load_settings())
    if db.exists():
        assert SQLiteEngine(db).status()["counts"].get("sessions", 0) == 0


def test_hostile_transcript_ids_and_huge_fields(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    path = tmp_path / "t.jsonl"
    huge = "x" * 3_000_000
    entries = [
        {"type": "user", "uuid": "'; DROP TABLE actions; --", "message": {"content": "a"}},
        {"type": "user", "uuid": "}) DETACH DELETE n //", "message": {"content": "b"}},
        {"type": "user", "uuid": "ok-1", "message": {"content": huge}},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert_quiet(hook(claude_payload("Stop", "s-huge", path, tool_response=huge)))
    # Over 2 MB to import: the background replay the hook started imports it.
    wait_for_background_replay(load_settings())
    actions = SessionsGraph(engine=store).get_actions("s-huge")
    assert [a.action_id for a in actions] == ["ok-1"]
    assert 0 < len(actions[0].text) < len(huge)  # cut to the store's limit


def test_unreadable_transcript_warns_and_still_queues(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    graph = SessionsGraph(engine=store)
    graph.record_session_start("s-1", user_id="alice")
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    result = hook(claude_payload("Stop", "s-1", folder))
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "cannot read transcript" in result.stderr
    other = hook(claude_payload("Stop", "s-1", Path("/etc/passwd")))
    assert other.returncode == 0 and "not a .jsonl file" in other.stderr
    assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]


def test_codex_hooks_and_notify(tmp_path: Path, db: Path, store: SQLiteEngine) -> None:
    from test_hooks_helpers import codex_rollout_lines

    sid = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    rollout = (
        tmp_path / "sessions" / "2026" / "11" / "29" / f"rollout-2026-11-29T10-00-00-{sid}.jsonl"
    )
    rollout.parent.mkdir(parents=True)
    rollout.write_text("".join(json.dumps(e) + "\n" for e in codex_rollout_lines(sid)))
    base = {
        "session_id": sid,
        "cwd": "/home/dev/project",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "transcript_path": str(rollout),
    }
    assert_quiet(hook(json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"})))
    assert_quiet(
        hook(
            json.dumps(
                {
                    **base,
                    "hook_event_name": "Stop",
                    "turn_id": "t1",
                    "stop_hook_active": False,
                    "last_assistant_message": "One file.",
                }
            )
        )
    )
    graph = SessionsGraph(engine=store)
    assert [a.action_type for a in graph.get_actions(sid)] == [
        "system_message",
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]
    assert graph.get_session(sid).reconciliation_status == "pending"  # type: ignore[union-attr]

    notify = {
        "type": "agent-turn-complete",
        "thread-id": "thread-1",
        "turn-id": "7",
        "cwd": "/home/dev/project",
        "input-messages": ["hello"],
        "last-assistant-message": "hi!",
    }
    argv_run = subprocess.run(
        [*HOOK, json.dumps(notify)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert_quiet(argv_run)
    assert_quiet(
        subprocess.run(
            [*HOOK, json.dumps(notify)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    )
    assert [a.text for a in graph.get_actions("thread-1")] == ["hello", "hi!"]


def test_session_end_with_auto_reconcile_returns_at_once(
    tmp_path: Path, db: Path, store: SQLiteEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook starts reconcile detached: it returns without waiting, and the
    child does not hold the hook's stdout/stderr (the runtime would wait for EOF)."""
    monkeypatch.setenv("SESSIONS_GRAPH_AUTO_RECONCILE", "1")
    log = Path(load_settings().state_dir) / "reconcile.log"
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s-end")
    t.user("bye")
    assert_quiet(hook(claude_payload("Stop", "s-end", t.path)))
    assert not log.exists()  # never on turn end
    assert_quiet(hook(claude_payload("SessionEnd", "s-end", t.path, reason="exit")))
    session = SessionsGraph(engine=store).get_session("s-end")
    assert session is not None and session.ended_at is not None
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.read_text().strip(), "the reconcile child ran and wrote to its log"


def test_replay_keeps_store_faults_and_sets_aside_everything_else(
    tmp_path: Path, store: SQLiteEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessions_graph.errors import StoreUnavailableError
    from sessions_graph.hooks import replay, spool

    settings = load_settings()
    first = spool.spool_payload(
        settings, json.loads(claude_payload("Stop", "s-1", None)), user_id="alice"
    )
    second = spool.spool_payload(
        settings, json.loads(claude_payload("Stop", "s-2", None)), user_id="alice"
    )
    graph = SessionsGraph(engine=store, settings=settings)

    def store_down(*args: object) -> None:
        raise StoreUnavailableError("server gone")

    monkeypatch.setattr(replay, "handle_payload", store_down)
    with pytest.raises(StoreUnavailableError):
        replay_spool(graph, settings)
    assert pending_files(settings) == [first, second]  # in place, order kept

    def bug(*args: object) -> None:
        raise KeyError("a bug, not the store")

    monkeypatch.setattr(replay, "handle_payload", bug)
    assert replay_spool(graph, settings) == 0
    assert pending_files(settings) == []
    assert sorted(p.name for p in (settings.spool_dir / "rejected").iterdir()) == [
        first.name,
        second.name,
    ]


def _without_user_id(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SESSIONS_GRAPH_USER_ID"}
    return {**env, **extra}


def test_the_default_user_id_is_the_os_name_made_valid(store: SQLiteEngine) -> None:
    """``LOGNAME=josé`` (getpass reads it first) must not make every event vanish."""
    env = _without_user_id(LOGNAME="josé", USER="josé")
    assert_quiet(hook(claude_payload("SessionStart", "s-jose", None), env=env))
    session = SessionsGraph(engine=store).get_session("s-jose")
    assert session is not None and session.user_id == "jos_-d994e1d0"


@pytest.mark.parametrize(
    "broken",
    ["user_id in the environment", "config file syntax"],
)
def test_unusable_settings_keep_the_event_for_replay_once_fixed(
    tmp_path: Path, db: Path, store: SQLiteEngine, broken: str
) -> None:
    config = tmp_path / "config" / "sessions-graph" / "config.toml"
    if broken == "config file syntax":
        config.parent.mkdir(parents=True)
        config.write_text('llm_model = "a\nb"\n')  # what `config set` used to write
        env = dict(os.environ)
    else:
        env = {**os.environ, "SESSIONS_GRAPH_USER_ID": "josé"}
    result = hook(claude_payload("UserPromptSubmit", "s-1", None, prompt="kept for later"), env=env)
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "settings unusable" in result.stderr and "spooled" in result.stderr
    assert ("user_id" if broken.startswith("user_id") else str(config)) in result.stderr
    settings = Settings()  # the default state dir: where the event was kept
    assert len(pending_files(settings)) == 1
    assert SessionsGraph(engine=store, settings=settings).get_session("s-1") is None

    config.unlink(missing_ok=True)  # the fix
    assert_quiet(hook(claude_payload("SessionStart", "s-2", None)))
    assert not pending_files(settings)
    graph = SessionsGraph(engine=store)
    assert [a.text for a in graph.get_actions("s-1")] == ["kept for later"]
    session = graph.get_session("s-1")
    assert session is not None and session.user_id == "alice"  # the corrected settings'


def test_a_spooled_event_stays_with_the_user_who_spooled_it(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    (tmp_path / "file").write_text("")
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "file" / "x.db")}
    result = hook(claude_payload("SessionStart", "s-alice", None), env=down)
    assert result.returncode == 0 and "spooled" in result.stderr
    # Another user's hook (or a cron job) replays the spool: the event is still alice's.
    as_root = {**os.environ, "SESSIONS_GRAPH_USER_ID": "root"}
    assert_quiet(hook(claude_payload("SessionStart", "s-root", None), env=as_root))
    assert not pending_files(load_settings())
    graph = SessionsGraph(engine=store)
    alice, root = graph.get_session("s-alice"), graph.get_session("s-root")
    assert alice is not None and alice.user_id == "alice"
    assert root is not None and root.user_id == "root"


def test_a_lone_surrogate_in_a_transcript_does_not_stop_capture(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s-sur")
    t.user("read the file")
    t.tool_use("Read", {"path": "bin.dat"}, "bytes: \ud800 end")  # written as "\ud800"
    assert "\\ud800" in t.path.read_text()
    t.assistant("done")
    assert_quiet(hook(claude_payload("Stop", "s-sur", t.path)))
    graph = SessionsGraph(engine=store)
    actions = graph.get_actions("s-sur")
    assert [a.action_type for a in actions] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]
    assert actions[2].text == "bytes: \ufffd end"
    assert graph.get_session("s-sur").reconciliation_status == "pending"  # type: ignore[union-attr]
    assert not pending_files(load_settings())


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("scheme", ["bolt", "neo4j", "http"])
def test_memgraph_down_is_one_stderr_line_and_a_spooled_event(
    tmp_path: Path, db: Path, scheme: str
) -> None:
    """The driver's warnings and log records stay off stderr, and its
    multi-line errors become one line; ``http`` is refused as a setting."""
    env = {
        **os.environ,
        "MEMGRAPH_URL": f"{scheme}://127.0.0.1:{_closed_port()}",
        "PYTHONWARNINGS": "always",
    }
    result = hook(claude_payload("SessionStart", "s-1", None), env=env)
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "spooled" in result.stderr and "Traceback" not in result.stderr
    # The driver's "...:\nFailed to establish..." became one space, not a "?".
    assert "?" not in result.stderr and "  " not in result.stderr
    assert result.stderr.strip() == f"sessions-graph: {log_lines()[-1].split(' ', 3)[3]}"
    assert len(pending_files(load_settings())) == 1


def test_changing_user_id_mid_session_loses_none_of_its_events(
    tmp_path: Path, store: SQLiteEngine
) -> None:
    """The README's setup step (`config set user_id ...`) is often run from
    inside an agent session: the rest of that session still lands, in its
    first owner's name."""
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s-1")
    t.user("first prompt")
    assert_quiet(hook(claude_payload("SessionStart", "s-1", t.path)))
    t.user("second prompt")
    later = {**os.environ, "SESSIONS_GRAPH_USER_ID": "alice-renamed"}
    assert_quiet(hook(claude_payload("Stop", "s-1", t.path), env=later))
    assert_quiet(hook(claude_payload("SessionEnd", "s-1", t.path), env=later))
    graph = SessionsGraph(engine=store)
    session = graph.get_session("s-1")
    assert session is not None and session.user_id == "alice" and session.ended_at
    assert [a.text for a in graph.get_actions("s-1")] == ["first prompt", "second prompt"]
    assert not list((tmp_path / "state" / "sessions-graph" / "spool").glob("**/*.json"))


def test_a_transcript_path_with_a_lone_surrogate_does_not_fail_the_event(
    tmp_path: Path, store: SQLiteEngine
) -> None:
    assert_quiet(hook(claude_payload("SessionStart", "s-1", None)))
    odd = tmp_path / "s\ud800.jsonl"
    result = hook(claude_payload("SessionEnd", "s-1", odd))
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.count("\n") <= 1  # a warning: the transcript cannot be read
    session = SessionsGraph(engine=store).get_session("s-1")
    assert session is not None and session.ended_at is not None
    assert session.reconciliation_status == "pending"


def test_an_event_kept_while_the_config_was_broken_is_replayed_from_a_new_state_dir(
    tmp_path: Path, store: SQLiteEngine
) -> None:
    """A config naming its own state_dir but not parsing: the event waits in the
    default spool, and is still replayed once the config is fixed."""
    config = tmp_path / "config" / "sessions-graph" / "config.toml"
    config.parent.mkdir(parents=True)
    mine = tmp_path / "mystate"
    config.write_text(f'state_dir = "{mine}"\nllm_model = "a\nb"\n')
    result = hook(claude_payload("UserPromptSubmit", "s-1", None, prompt="kept for later"))
    assert result.returncode == 0 and "settings unusable" in result.stderr
    config.write_text(f'state_dir = "{mine}"\n')
    assert_quiet(hook(claude_payload("Stop", "s-1", None)))
    actions = SessionsGraph(engine=store).get_actions("s-1")
    assert [a.text for a in actions] == ["kept for later"]
    assert not list((tmp_path / "state" / "sessions-graph" / "spool").glob("*.json"))


def test_state_files_are_private_and_secrets_are_stored_redacted(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    """The state directory, spool and log are created 0700 / 0600 whatever
    the umask, and a secret in the transcript is stored redacted."""
    import stat

    sid = "s-secret"
    t = ClaudeTranscript(tmp_path / f"{sid}.jsonl", sid)
    t.user("deploy it")
    t.tool_use("Bash", {"command": "cat .env"}, "DB_PASSWORD=hunter2xyz\nPORT=80")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    umask = "import os, runpy, sys; os.umask(0o022); sys.argv[0] = 'sessions-graph'; "
    run = "runpy.run_module('sessions_graph', run_name='__main__')"
    runner = [sys.executable, "-c", umask + run]
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(blocker / "s.db")}
    payload = claude_payload("Stop", sid, t.path)
    spooled = subprocess.run(
        [*runner, "hook"], input=payload, capture_output=True, text=True, env=down, timeout=60
    )
    assert spooled.returncode == 0 and "spooled" in spooled.stderr
    settings = load_settings()
    state = Path(settings.state_dir)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(state) == mode(settings.spool_dir) == 0o700
    assert [mode(p) for p in pending_files(settings)] == [0o600]
    assert mode(settings.log_path) == 0o600
    # The note of the client's last hook event too (``sessions-graph status`` reads it).
    assert [mode(p) for p in (state / "hooks").iterdir()] == [0o600]
    assert mode(state / "hooks") == 0o700

    stored = subprocess.run(
        [*runner, "hook"], input=payload, capture_output=True, text=True, timeout=60
    )
    assert (stored.returncode, stored.stdout, stored.stderr) == (0, "", "")
    texts = [a.text for a in SessionsGraph(engine=store).get_actions(sid)]
    assert "hunter2xyz" not in "".join(texts)
    assert "DB_PASSWORD=[REDACTED:password]\nPORT=80" in texts


def test_a_hook_on_an_older_store_spools_and_leaves_the_migration_to_a_detached_process(
    db: Path,
) -> None:
    """Migrating re-indexes every action (40 s at 300,000): more than any
    hook may take. A hook that finds an older schema leaves it as it is,
    spools its event and hands both to a detached replay, which migrates and
    then stores the event."""
    import sqlite3

    from test_recall_layer import _old_store

    from sessions_graph.engines.sqlite.schema import SCHEMA_VERSION
    from sessions_graph.hooks.spool import replay_lock

    _old_store(db, 10, ["an old question about kafka"], indexed=True)
    settings = load_settings()
    payload = claude_payload("UserPromptSubmit", "s-new", None, prompt="which kafka topic?")
    # Held here, the replay lock keeps the hook from starting the replay
    # itself, so that what the hook alone did can be seen.
    with replay_lock(settings) as held:
        assert held
        assert_quiet(hook(payload))
        version = sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0]
        assert version == 10  # not migrated by the hook
        assert len(pending_files(settings)) == 1  # the event is spooled, not lost
    assert any("spooled as" in line for line in log_lines())

    drain = subprocess.run(
        [sys.executable, "-m", "sessions_graph.hooks.drain"], capture_output=True, timeout=120
    )
    assert drain.returncode == 0
    assert spool_is_empty(settings)
    engine = SQLiteEngine(db)
    assert engine.status()["schema_version"] == SCHEMA_VERSION
    assert [a["text"] for a in engine.get_actions("s-new")] == ["which kafka topic?"]
    assert [a["text"] for a in engine.get_actions("s")] == ["an old question about kafka"]
    engine.close()


def test_a_large_transcript_backlog_is_imported_by_the_background_replay_in_order(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    """A Stop hook on a backlog of megabytes took seconds; the hook queues it
    for the background replay instead, and the events after it queue behind,
    so every line lands, in order."""
    from sessions_graph.hooks.handle import HOOK_IMPORT_BYTES
    from sessions_graph.hooks.spool import replay_lock

    sid = "5d2f8e10-3c4b-4a5d-8e6f-7a8b9c0d1e2f"
    t = ClaudeTranscript(tmp_path / "projects" / "-home-dev-project" / f"{sid}.jsonl", sid)
    expected = [t.user(f"request {n} " + "x" * 100_000)["uuid"] for n in range(30)]
    assert t.path.stat().st_size > HOOK_IMPORT_BYTES
    settings = load_settings()
    with replay_lock(settings) as held:  # so that what the hooks alone do can be seen
        assert held
        assert_quiet(hook(claude_payload("Stop", sid, t.path)))
        assert store.get_actions(sid) == []  # not imported by the hook
        expected.append(t.user("and one more")["uuid"])
        assert_quiet(hook(claude_payload("UserPromptSubmit", sid, t.path, prompt="and one more")))
        assert store.get_actions(sid) == []  # queued behind, not ahead
        assert len(pending_files(settings)) == 2
    drain = subprocess.run(
        [sys.executable, "-m", "sessions_graph.hooks.drain"], capture_output=True, timeout=120
    )
    assert drain.returncode == 0 and spool_is_empty(settings)
    assert [a["action_id"] for a in store.get_actions(sid)] == expected


def test_a_spool_temp_file_is_abandoned_only_past_ten_minutes(
    store: SQLiteEngine,
) -> None:
    """docs/hooks.md: a spool temp file older than ten minutes was left by a
    write that failed and is removed; a younger one may be a write under way
    (a hook spooling right now) and is left alone."""
    settings = load_settings()
    settings.spool_dir.mkdir(parents=True)
    ages = {"writing": 0.0, "nearly": 590.0, "abandoned": 600.5}
    temps = {name: settings.spool_dir / f".{name}.json.tmp" for name in ages}
    for name, path in temps.items():
        path.write_bytes(b"{")
        os.utime(path, (time.time() - ages[name],) * 2)
    graph = SessionsGraph(engine=store)
    replay_spool(graph, settings)
    assert sorted(p.name for p in settings.spool_dir.iterdir() if p.name.endswith(".tmp")) == [
        ".nearly.json.tmp",
        ".writing.json.tmp",
    ]


def test_an_event_claimed_by_a_replayer_that_died_is_replayed_in_its_place(
    store: SQLiteEngine,
) -> None:
    """A replayer killed between its claim (a rename) and its delete leaves
    the file under its claimed name: the next replay puts it back and applies
    it, in arrival order with the rest."""
    from sessions_graph.hooks.spool import CLAIM, spool_payload

    settings = load_settings()
    first = spool_payload(
        settings,
        json.loads(claude_payload("UserPromptSubmit", "s-1", None, prompt="one")),
        user_id="alice",
    )
    spool_payload(
        settings,
        json.loads(claude_payload("UserPromptSubmit", "s-1", None, prompt="two")),
        user_id="alice",
    )
    first.rename(first.with_name(f"{first.name}{CLAIM}99999"))
    assert replay_spool(SessionsGraph(engine=store), settings) == 2
    assert [a.text for a in SessionsGraph(engine=store).get_actions("s-1")] == ["one", "two"]
    assert spool_is_empty(settings)


def test_hook_help_prints_the_usage_and_records_nothing(db: Path) -> None:
    result = subprocess.run([*HOOK, "--help"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("usage: sessions-graph hook")
    assert not db.exists() and not load_settings().log_path.exists()


def test_each_clients_last_hook_event_is_noted_from_the_first_one_on(
    tmp_path: Path, db: Path, store: SQLiteEngine
) -> None:
    """``sessions-graph status`` says when each client last ran a hook: noted
    on a machine with no state directory yet, and replaced by each later event."""
    from sessions_graph.hooks.health import last_events

    state = Path(load_settings().state_dir)
    assert not state.exists()
    t = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    assert_quiet(hook(claude_payload("SessionStart", "s-1", t.path)))
    assert last_events(state)["claude-code"]["event"] == "SessionStart"
    t.user("first prompt")
    assert_quiet(hook(claude_payload("Stop", "s-1", t.path)))
    noted = last_events(state)["claude-code"]
    assert (noted["event"], noted["outcome"]) == ("Stop", "stored 1 action")
