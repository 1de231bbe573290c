"""The spool, in-process: what a spooled event keeps, which files count as
events, the replay lock, old events, and the detached drain."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from test_hooks_helpers import claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks import drain
from sessions_graph.hooks.replay import replay_spool
from sessions_graph.hooks.spool import (
    CLAIM,
    DRAIN_LOCK,
    pending_files,
    replay_lock,
    replay_running,
    spool_is_empty,
    spool_payload,
)
from sessions_graph.settings import Settings, load_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db=str(tmp_path / "s.db"), state_dir=str(tmp_path / "state"), user_id="alice")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _prompt(session_id: str, prompt: str, **extra: object) -> dict:
    return json.loads(claude_payload("UserPromptSubmit", session_id, None, prompt=prompt, **extra))


def test_a_spooled_event_keeps_its_user_and_sheds_what_its_transcript_holds(
    settings: Settings, tmp_path: Path
) -> None:
    bulky = {"tool_input": {"file": "x"}, "tool_response": "big", "last_assistant_message": "m"}
    with_transcript = {**_prompt("s-1", "a"), **bulky, "transcript_path": str(tmp_path / "t.jsonl")}
    without = {**_prompt("s-2", "b"), **bulky}
    first = json.loads(spool_payload(settings, with_transcript, user_id="alice").read_text())
    second = json.loads(spool_payload(settings, without, user_id=None).read_text())
    assert first == {
        "user_id": "alice",
        "payload": {k: with_transcript[k] for k in with_transcript if k not in bulky},
    }
    assert second == {"user_id": None, "payload": without}  # no transcript: nothing else holds them


def test_a_rejected_event_is_set_aside_with_its_reason_and_is_no_event(settings: Settings) -> None:
    kept = spool_payload(
        settings, _prompt("s-1", "a"), user_id="alice", rejected=True, reason="bad"
    )
    assert kept.parent == settings.spool_dir / "rejected"
    assert json.loads(kept.read_text())["reason"] == "bad"
    assert pending_files(settings) == [] and spool_is_empty(settings)


def test_the_state_directory_keeps_its_files_private(settings: Settings) -> None:
    """Also what the replay lock and a rejected event create (0700 / 0600 whatever the umask)."""
    old = os.umask(0o022)
    try:
        spooled = spool_payload(settings, _prompt("s-1", "a"), user_id="alice")
        rejected = spool_payload(settings, _prompt("s-2", "b"), user_id="alice", rejected=True)
        with replay_lock(settings) as held:
            assert held
    finally:
        os.umask(old)
    assert [_mode(p) for p in (spooled, rejected, settings.spool_dir / ".replay.lock")] == [
        0o600
    ] * 3
    assert [_mode(d) for d in (Path(settings.state_dir), settings.spool_dir, rejected.parent)] == [
        0o700
    ] * 3


def test_only_our_event_files_count_as_waiting(settings: Settings) -> None:
    """Dot-prefixed files (the locks, temp files, anything hidden) are never
    events; a claimed event is not to be taken, but still waits."""
    settings.spool_dir.mkdir(parents=True)
    for name in (".hidden.json", ".00000000000000000001-1-0001.json.tmp"):
        (settings.spool_dir / name).write_text("{}")
    spool_payload(settings, _prompt("s-0", "x"), user_id="alice", rejected=True)
    assert pending_files(settings) == [] and spool_is_empty(settings)
    event = spool_payload(settings, _prompt("s-1", "a"), user_id="alice")
    assert pending_files(settings) == [event] and not spool_is_empty(settings)
    event.rename(event.with_name(f"{event.name}{CLAIM}4242"))
    assert pending_files(settings) == [] and not spool_is_empty(settings)


def test_one_replayer_at_a_time(settings: Settings) -> None:
    assert not replay_running(settings)
    with replay_lock(settings) as held:
        assert held and replay_running(settings)
        with replay_lock(settings) as again:
            assert not again
    assert not replay_running(settings)
    with replay_lock(settings, DRAIN_LOCK) as held:  # a drain may be migrating first
        assert held and replay_running(settings)


def test_an_event_spooled_long_ago_is_still_replayed(settings: Settings) -> None:
    """Only abandoned temp files expire; an event waits however long the store was down."""
    event = spool_payload(settings, _prompt("s-1", "after the outage"), user_id="alice")
    hour_ago = time.time() - 3600
    os.utime(event, (hour_ago, hour_ago))
    graph = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    assert replay_spool(graph, settings) == 1
    assert [a.text for a in graph.get_actions("s-1")] == ["after the outage"]
    graph.close()


def test_a_file_that_is_no_spool_record_is_set_aside_saying_so(settings: Settings) -> None:
    settings.spool_dir.mkdir(parents=True)
    stray = settings.spool_dir / "00000000000000000001-00000001-0001.json"
    stray.write_text(json.dumps({"user_id": "alice"}))
    graph = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    assert replay_spool(graph, settings) == 0
    graph.close()
    kept = json.loads((settings.spool_dir / "rejected" / stray.name).read_text())
    assert kept["reason"] == "PayloadError: not a spool record: no payload"


# -- the detached drain (``python -m sessions_graph.hooks.drain``) --------------------------
def test_a_second_drain_leaves_the_spool_to_the_first() -> None:
    settings = load_settings()
    event = spool_payload(settings, _prompt("s-1", "a"), user_id="alice")
    with replay_lock(settings, DRAIN_LOCK) as held:
        assert held
        assert drain.main() == 0
    assert pending_files(settings) == [event]
    assert not Path(settings.db).exists()  # the store was not even opened


def test_a_drain_that_cannot_open_the_store_keeps_the_files_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("SESSIONS_GRAPH_DB", str(blocker / "s.db"))
    settings = load_settings()
    event = spool_payload(settings, _prompt("s-1", "a"), user_id="alice")
    assert drain.main() == 0
    assert pending_files(settings) == [event]
    assert "WARN" in settings.log_path.read_text()
    assert "background replay stopped" in settings.log_path.read_text()


def test_a_drain_applies_the_whole_spool_and_says_how_much() -> None:
    settings = load_settings()
    for text in ("one", "two"):
        spool_payload(settings, _prompt("s-1", text), user_id="alice")
    assert drain.main() == 0
    assert spool_is_empty(settings)
    graph = SessionsGraph(settings=settings)
    assert [a.text for a in graph.get_actions("s-1")] == ["one", "two"]
    graph.close()
    assert "background replay: 2 spooled events applied" in settings.log_path.read_text()
