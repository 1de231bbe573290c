"""The hook's flow, run in-process (``runner.run``, as ``sessions-graph hook``
runs it): what ``status`` notes for a refused payload, and where a large
transcript backlog is imported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_hooks_helpers import claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.hooks import runner
from sessions_graph.hooks.handle import HOOK_IMPORT_BYTES
from sessions_graph.hooks.health import last_events
from sessions_graph.hooks.spool import pending_files, replay_lock
from sessions_graph.settings import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db=str(tmp_path / "s.db"), state_dir=str(tmp_path / "state"), user_id="alice")


@pytest.mark.parametrize(("payload", "noted"), [({"hook_event_name": "Stop"}, "Stop"), ({}, "?")])
def test_a_refused_payload_is_noted_under_its_event_for_status(
    settings: Settings, capsys: pytest.CaptureFixture[str], payload: dict, noted: str
) -> None:
    """No session id: refused, said in one line, and ``status`` shows which
    event it was (``?`` when it did not say)."""
    assert runner.run([json.dumps(payload)], settings) is None
    assert last_events(Path(settings.state_dir))["unknown"]["event"] == noted
    assert last_events(Path(settings.state_dir))["unknown"]["outcome"] == "rejected (bad payload)"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hook payload rejected" in err
    assert not Path(settings.db).exists()


def _transcript_of(path: Path, size: int) -> None:
    """A transcript of exactly ``size`` bytes: one prompt, then an entry that
    carries no conversation (a snapshot) padded to the size."""
    prompt = {"type": "user", "uuid": "u-1", "message": {"content": "the prompt"}}
    head = (json.dumps(prompt) + "\n").encode()
    empty = b'{"type": "file-history-snapshot", "pad": ""}\n'
    pad = b"x" * (size - len(head) - len(empty))
    path.write_bytes(head + empty.replace(b'""', b'"' + pad + b'"'))
    assert path.stat().st_size == size


@pytest.mark.parametrize(
    ("size", "by_the_hook"), [(HOOK_IMPORT_BYTES, True), (HOOK_IMPORT_BYTES + 1, False)]
)
def test_a_backlog_up_to_the_hooks_share_is_imported_by_the_hook_itself(
    tmp_path: Path, settings: Settings, size: int, by_the_hook: bool
) -> None:
    """docs: a hook imports up to HOOK_IMPORT_BYTES of transcript; a larger
    backlog waits in the spool for the background replay (held off here by
    holding its lock, so that what the hook alone does can be seen)."""
    transcript = tmp_path / "s-1.jsonl"
    _transcript_of(transcript, size)
    with replay_lock(settings) as held:
        assert held
        runner.run([claude_payload("Stop", "s-1", transcript)], settings)
    engine = SQLiteEngine(settings.db)
    stored = [a["text"] for a in engine.get_actions("s-1")]
    engine.close()
    assert stored == (["the prompt"] if by_the_hook else [])
    assert len(pending_files(settings)) == (0 if by_the_hook else 1)


def test_the_next_hook_replays_what_was_spooled_before_its_own_event(settings: Settings) -> None:
    """Events the store could not take wait in the spool; the next hook
    applies them first, in order, each as its owner's (an event kept while
    the settings were unusable is the user's of the settings that replay it),
    then its own event, all before it returns. Called without a start time,
    as a caller other than ``sessions-graph hook`` would."""
    from sessions_graph.hooks.spool import spool_is_empty, spool_payload

    def prompt(session_id: str, text: str) -> dict:
        return json.loads(claude_payload("UserPromptSubmit", session_id, None, prompt=text))

    spool_payload(settings, prompt("s-1", "first"), user_id="alice")
    spool_payload(settings, prompt("s-bob", "bob's"), user_id="bob")
    spool_payload(settings, prompt("s-1", "second"), user_id=None)
    runner.run([json.dumps(prompt("s-1", "third"))], settings)
    assert spool_is_empty(settings)
    assert not (settings.spool_dir / "rejected").exists()
    engine = SQLiteEngine(settings.db)
    owners = {sid: engine.get_session(sid)["user_id"] for sid in ("s-1", "s-bob")}
    texts = [a["text"] for a in engine.get_actions("s-1")]
    engine.close()
    assert owners == {"s-1": "alice", "s-bob": "bob"}
    assert texts == ["first", "second", "third"]


def test_a_payload_of_32_mib_is_taken_and_one_byte_more_refused(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented limit holds for a payload passed as the argument (Codex
    ``notify``) as for one on stdin."""
    limit = 32 * 1024 * 1024

    def padded(session_id: str, size: int) -> str:
        # JSON allows blanks after the value: the event stays small.
        body = claude_payload("UserPromptSubmit", session_id, None, prompt="sized prompt")
        return body + " " * (size - len(body))

    runner.run([padded("s-limit", limit)], settings)
    assert capsys.readouterr().err == ""
    runner.run([padded("s-over", limit + 1)], settings)
    assert capsys.readouterr().err.strip().endswith(f"payload larger than {limit} bytes")
    engine = SQLiteEngine(settings.db)
    stored = [[a["text"] for a in engine.get_actions(sid)] for sid in ("s-limit", "s-over")]
    engine.close()
    assert stored == [["sized prompt"], []]


def test_a_hook_that_can_neither_store_nor_spool_says_so_in_one_line_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store's directory and the state directory are both files: the
    event cannot be kept anywhere, and the agent gets one line, never a
    traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SESSIONS_GRAPH_DB", str(blocker / "s.db"))
    monkeypatch.setenv("SESSIONS_GRAPH_STATE_DIR", str(blocker / "state"))
    # The hook hides these modules for its own short life; not for the tests after this one.
    for name in runner.UNUSED_BY_HOOKS:
        monkeypatch.setitem(sys.modules, name, sys.modules.get(name))
    assert runner.main([claude_payload("Stop", "s-1", None)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("sessions-graph: hook failed:")
