"""What one hook payload does to the store, applied in-process through
``handle_payload`` (the function the hook process and the spool replay share):
whose event it is, and which transcript names which session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.errors import MemoryValidationError
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.handle import (
    PayloadError,
    handle_payload,
    is_store_fault,
    transcript_backlog,
)
from sessions_graph.settings import Settings

#: A Codex session id: the UUID that ends its rollout file's name.
BOBS_CODEX_SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db=str(tmp_path / "x.db"), state_dir=str(tmp_path / "state"))


@pytest.fixture
def graph(settings: Settings) -> Iterator[SessionsGraph]:
    g = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    yield g
    g.close()


def _event(event: str, session_id: str, transcript: Path | None, **extra: str) -> dict:
    return json.loads(claude_payload(event, session_id, transcript, **extra))


@pytest.mark.parametrize(
    "name",
    [
        f"rollout-2026-11-29T10-00-00-{BOBS_CODEX_SESSION}.jsonl",
        f"rollout-x-{BOBS_CODEX_SESSION}.jsonl",  # the shortest time part: one character
    ],
)
def test_a_rollout_named_after_another_users_codex_session_is_not_taken(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, name: str
) -> None:
    """Codex names a rollout ``rollout-<time>-<session id>``: alice's event
    naming bob's rollout would record bob's lines not captured yet as hers."""
    handle_payload(graph, settings, _event("SessionStart", BOBS_CODEX_SESSION, None), "bob")
    rollout = ClaudeTranscript(tmp_path / name, "alice-s1")
    rollout.user("bob's uncaptured line")
    with pytest.raises(MemoryValidationError, match="not found for user 'alice'"):
        handle_payload(graph, settings, _event("Stop", "alice-s1", rollout.path), "alice")
    assert graph.get_actions("alice-s1") == [] and graph.session_owner("alice-s1") is None


@pytest.mark.parametrize(
    "name",
    [
        f"rollout--{BOBS_CODEX_SESSION}.jsonl",  # no time part: not Codex's naming
        f"rollout-2026-11-29T10-00-00_{BOBS_CODEX_SESSION}.jsonl",  # no dash before the id
        f"notes-2026-11-29T10-00-00-{BOBS_CODEX_SESSION}.jsonl",
    ],
)
def test_a_file_that_only_ends_with_a_session_id_names_no_session(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, name: str
) -> None:
    handle_payload(graph, settings, _event("SessionStart", BOBS_CODEX_SESSION, None), "bob")
    transcript = ClaudeTranscript(tmp_path / name, "alice-s1")
    transcript.user("alice's own line")
    outcome = handle_payload(graph, settings, _event("Stop", "alice-s1", transcript.path), "alice")
    assert outcome.added == 1
    assert [a.text for a in graph.get_actions("alice-s1")] == ["alice's own line"]
    assert graph.session_owner("alice-s1") == "alice"


def test_a_transcript_not_written_yet_is_not_reported_as_rewritten(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    """Runtimes create the transcript lazily: an event naming one that does
    not exist yet imports nothing and says nothing about a rewrite."""
    outcome = handle_payload(
        graph, settings, _event("SessionStart", "s-1", tmp_path / "later.jsonl"), "alice"
    )
    assert (outcome.added, outcome.reread) == (0, False)
    assert "rewritten" not in outcome.summary()
    assert graph.session_owner("s-1") == "alice"


# -- the payload's limits: both sides of each ---------------------------------


def _start(session_id: str = "s-1", **extra: object) -> dict:
    return {"hook_event_name": "SessionStart", "session_id": session_id, **extra}


def test_an_event_name_of_64_characters_is_taken_and_65_refused(
    settings: Settings, graph: SessionsGraph
) -> None:
    longest = "E" * 64
    assert handle_payload(graph, settings, _start(hook_event_name=longest), "alice").event == (
        longest
    )
    with pytest.raises(PayloadError, match="hook_event_name"):
        handle_payload(graph, settings, _start("s-2", hook_event_name="E" * 65), "alice")
    assert graph.session_owner("s-2") is None


@pytest.mark.parametrize("name", ["Session Start", "", 7, None, "1Stop"])
def test_an_event_name_that_is_no_identifier_is_refused(
    settings: Settings, graph: SessionsGraph, name: object
) -> None:
    with pytest.raises(PayloadError, match="hook_event_name"):
        handle_payload(graph, settings, _start(hook_event_name=name), "alice")
    assert graph.session_owner("s-1") is None


@pytest.mark.parametrize("payload", [[], "SessionStart", None, 3])
def test_a_payload_that_is_no_object_is_refused(
    settings: Settings, graph: SessionsGraph, payload: object
) -> None:
    with pytest.raises(PayloadError, match="not a JSON object"):
        handle_payload(graph, settings, payload, "alice")


@pytest.mark.parametrize("key", ["cwd", "transcript_path"])
def test_a_path_of_4096_characters_is_taken_and_4097_refused(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, key: str
) -> None:
    base = str(tmp_path) + "/"
    longest = base + "p" * (4096 - len(base))
    assert len(longest) == 4096
    handle_payload(graph, settings, _start(**{key: longest}), "alice")
    assert graph.session_owner("s-1") == "alice"
    with pytest.raises(PayloadError, match=f"{key} must be a string of at most 4096"):
        handle_payload(graph, settings, _start("s-2", **{key: longest + "p"}), "alice")
    with pytest.raises(PayloadError, match=f"{key} must be a string"):
        handle_payload(graph, settings, _start("s-2", **{key: ["/home"]}), "alice")
    assert graph.session_owner("s-2") is None


def test_a_session_start_records_the_session_with_its_cwd_and_project(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    root = tmp_path / "orion"
    (root / ".git").mkdir(parents=True)
    outcome = handle_payload(graph, settings, _start(cwd=str(root / "src")), "alice")
    assert outcome.summary() == "SessionStart session=s-1 new_actions=0"
    assert outcome.user_id == "alice" and outcome.warnings == []
    session = graph.engine.get_session("s-1")
    assert (session["user_id"], session["cwd"], session["project_key"]) == (
        "alice",
        str(root / "src"),
        str(root),
    )
    assert graph.pending_sessions(plain=True) == []  # a start is no turn's end


def test_a_session_start_moves_the_projects_sessions_from_its_old_key(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    root = tmp_path / "orion"
    (root / ".git").mkdir(parents=True)
    graph.record_session_start("old", user_id="alice", cwd=str(root), project_key="orion")
    handle_payload(graph, settings, _start("s-1", hook_event_name="Stop", cwd=str(root)), "alice")
    assert graph.engine.get_session("old")["project_key"] == "orion"  # only a start moves them
    handle_payload(graph, settings, _start("s-1", cwd=str(root)), "alice")
    assert graph.engine.get_session("old")["project_key"] == str(root)


def test_a_prompt_without_a_transcript_is_recorded_once_per_turn(
    settings: Settings, graph: SessionsGraph
) -> None:
    def prompt(text: object, **extra: object) -> dict:
        return {"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "prompt": text, **extra}

    assert handle_payload(graph, settings, prompt("fix the cache"), "alice").added == 1
    assert handle_payload(graph, settings, prompt("fix the cache"), "alice").added == 0
    assert (
        handle_payload(graph, settings, prompt("fix the cache", turn_id="t2"), "alice").added == 1
    )
    for nothing in ("   ", None, 42):
        assert handle_payload(graph, settings, prompt(nothing), "alice").added == 0
    assert [a.text for a in graph.get_actions("s-1")] == ["fix the cache", "fix the cache"]
    assert graph.pending_sessions(plain=True) == []


def test_a_codex_notify_records_the_turn_and_marks_it_pending(
    settings: Settings, graph: SessionsGraph
) -> None:
    notify = {
        "type": "agent-turn-complete",
        "thread-id": "th-1",
        "turn-id": "t-1",
        "input-messages": ["rename the flag"],
        "last-assistant-message": "Renamed it.",
        "cwd": "/home/dev/project",
    }
    outcome = handle_payload(graph, settings, notify, "alice")
    assert (outcome.event, outcome.session_id, outcome.added) == ("agent-turn-complete", "th-1", 2)
    assert graph.session_owner("th-1") == "alice"
    assert [a.text for a in graph.get_actions("th-1")] == ["rename the flag", "Renamed it."]
    assert [s["session_id"] for s in graph.pending_sessions(plain=True)] == ["th-1"]


@pytest.mark.parametrize(
    ("event", "pending"),
    [("Stop", True), ("PreCompact", True), ("SubagentStop", True), ("Notification", False)],
)
def test_a_turns_end_marks_the_session_pending(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, event: str, pending: bool
) -> None:
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("add a retry")
    transcript.assistant("Added a retry.")
    outcome = handle_payload(graph, settings, _event(event, "s-1", transcript.path), "alice")
    assert outcome.added == 2
    assert bool(graph.pending_sessions(plain=True)) is pending
    assert graph.engine.get_session("s-1")["ended_at"] is None


def test_a_session_end_ends_the_session_with_its_digest(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("make the importer skip sidechains")
    transcript.assistant("Done: sidechains are skipped.")
    handle_payload(graph, settings, _event("SessionEnd", "s-1", transcript.path), "alice")
    assert graph.engine.get_session("s-1")["ended_at"] is not None
    assert graph.engine.get_digest("s-1") is not None


def test_a_transcript_that_is_no_jsonl_file_is_a_warning(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    text = tmp_path / "s-1.txt"
    text.write_text('{"type": "user"}\n')
    outcome = handle_payload(graph, settings, _event("Stop", "s-1", text), "alice")
    assert outcome.warnings == [f"transcript_path is not a .jsonl file: {text}"]
    assert graph.import_cursor_state("s-1") is None
    from sessions_graph.hooks.handle import Outcome, import_transcript

    later = Outcome("import", "s-1")
    assert import_transcript(graph, "s-1", "alice", str(text), later) == 0
    assert later.warnings == outcome.warnings


# -- whose event it is ---------------------------------------------------------


def test_another_users_session_is_refused_unless_named_by_its_own_transcript(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    """Bob's session, imported from its transcript: alice's event naming that
    transcript is recorded for bob (a mid-session user_id change), with no
    context for alice; any other event of alice's for it is refused."""
    transcript = ClaudeTranscript(tmp_path / "bob-s.jsonl", "bob-s")
    transcript.user("bob's request")
    handle_payload(graph, settings, _event("Stop", "bob-s", transcript.path), "bob")
    transcript.assistant("bob's answer")
    outcome = handle_payload(graph, settings, _event("Stop", "bob-s", transcript.path), "alice")
    assert (outcome.added, outcome.user_id) == (1, None)
    assert graph.session_owner("bob-s") == "bob"
    other = ClaudeTranscript(tmp_path / "elsewhere.jsonl", "bob-s")
    other.user("alice's line")
    for path in (other.path, None):
        with pytest.raises(MemoryValidationError, match="not found for user 'alice'"):
            handle_payload(graph, settings, _event("Stop", "bob-s", path), "alice")
    assert [a.text for a in graph.get_actions("bob-s")] == ["bob's request", "bob's answer"]


def test_an_own_session_or_one_named_by_no_known_session_is_the_users(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    """A transcript named after another session of the same user, or after no
    session the store knows, is the event's own to import."""
    handle_payload(graph, settings, _start("alice-old"), "alice")
    for name in ("alice-old.jsonl", "notes.jsonl"):
        transcript = ClaudeTranscript(tmp_path / name, "alice-new")
        transcript.user(f"line of {name}")
        outcome = handle_payload(
            graph, settings, _event("Stop", "alice-new", transcript.path), "alice"
        )
        assert (outcome.added, outcome.user_id) == (1, "alice")
    assert graph.session_owner("alice-new") == "alice"
    assert graph.session_owner("notes") is None


# -- the import cursor and the backlog ----------------------------------------


def test_the_backlog_is_what_lies_past_the_cursor(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("first request")
    event = _event("Stop", "s-1", transcript.path)
    size = transcript.path.stat().st_size
    assert transcript_backlog(graph, event) == size  # no cursor yet: all of it
    assert handle_payload(graph, settings, event, "alice").added == 1
    assert transcript_backlog(graph, event) == 0
    assert graph.import_cursor_state("s-1").offset == size
    transcript.assistant("first answer")
    grown = transcript.path.stat().st_size
    assert transcript_backlog(graph, event) == grown - size
    assert handle_payload(graph, settings, event, "alice").added == 1
    assert transcript_backlog(graph, event) == 0
    # A transcript the cursor does not name is read from its start.
    moved = ClaudeTranscript(tmp_path / "moved.jsonl", "s-1")
    moved.user("after the move")
    other = _event("Stop", "s-1", moved.path)
    assert transcript_backlog(graph, other) == moved.path.stat().st_size
    outcome = handle_payload(graph, settings, other, "alice")
    assert (outcome.added, outcome.reread) == (1, False)  # new, not rewritten
    # Cut shorter than the cursor: nothing left to read, never a negative count.
    moved.path.write_text("")
    assert transcript_backlog(graph, other) == 0


@pytest.mark.parametrize(
    "payload",
    [
        {"session_id": "s-1"},
        {"session_id": "s-1", "transcript_path": "/nowhere/s-1.jsonl"},
        {"session_id": "s-1", "transcript_path": 7},
        {"session_id": 7, "transcript_path": "{transcript}"},
        {"session_id": "s-1", "transcript_path": "{text}"},
    ],
)
def test_no_readable_transcript_is_no_backlog(
    tmp_path: Path, graph: SessionsGraph, payload: dict
) -> None:
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("a request")
    text = tmp_path / "s-1.txt"
    text.write_text("x" * 100)
    filled = {
        k: v.format(transcript=transcript.path, text=text) if isinstance(v, str) else v
        for k, v in payload.items()
    }
    assert transcript_backlog(graph, filled) == 0


def test_an_empty_transcript_is_remembered_at_offset_zero(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    """The session knows its transcript before it has a line: an event of
    another user naming it later is the owner's own runtime speaking."""
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    handle_payload(graph, settings, _event("SessionStart", "s-1", transcript.path), "bob")
    cursor = graph.import_cursor_state("s-1")
    assert (cursor.source, cursor.offset) == (str(transcript.path), 0)
    transcript.user("bob's first request")
    outcome = handle_payload(graph, settings, _event("Stop", "s-1", transcript.path), "alice")
    assert (outcome.added, graph.session_owner("s-1")) == (1, "bob")


def test_a_store_fault_is_told_from_a_payload_that_can_never_pass() -> None:
    import sqlite3

    from sessions_graph.errors import StoreError

    assert is_store_fault(StoreError("locked"))
    assert is_store_fault(OSError(28, "No space left on device"))
    assert is_store_fault(sqlite3.OperationalError("database is locked"))
    assert not is_store_fault(PayloadError("bad"))
    assert not is_store_fault(MemoryValidationError("bad id"))
    assert not is_store_fault(KeyError("bug"))


def test_a_transcript_rewritten_since_the_last_import_is_read_again_and_said_so(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("first request")
    event = _event("Stop", "s-1", transcript.path)
    handle_payload(graph, settings, event, "alice")
    transcript.path.write_text("")  # rewritten: other lines, longer than before
    transcript.user("a request written over the old one, and longer than it was")
    transcript.assistant("its answer")
    outcome = handle_payload(graph, settings, event, "alice")
    assert (outcome.added, outcome.reread) == (2, True)
    assert outcome.summary() == (
        "Stop session=s-1 new_actions=2;"
        " transcript rewritten since the last import, read again from its start"
    )


@pytest.mark.parametrize(("extra", "by_the_hook"), [(0, True), (1, False)])
def test_a_backlog_of_2_mib_is_imported_by_the_hook_and_more_by_the_background_replay(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, extra: int, by_the_hook: bool
) -> None:
    """What a hook imports itself is bounded (seconds of work otherwise): a
    transcript backlog of 2 MiB is, one byte more is spooled for the replay
    in the background (held off here, so that the hook's own part shows)."""
    from sessions_graph.hooks.runner import run
    from sessions_graph.hooks.spool import replay_lock, spool_is_empty

    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    entry = transcript.user("")
    bare = len(json.dumps(entry)) + 1
    entry["message"]["content"] = "x" * (2 * 1024 * 1024 + extra - bare)
    transcript.path.write_text(json.dumps(entry) + "\n")
    assert transcript.path.stat().st_size == 2 * 1024 * 1024 + extra
    with replay_lock(settings) as held:
        assert held
        run([claude_payload("Stop", "s-1", transcript.path)], settings)
        assert (len(graph.engine.get_actions("s-1")) == 1) is by_the_hook
        assert spool_is_empty(settings) is by_the_hook


@pytest.mark.parametrize(("event", "answered"), [("Stop", True), ("PreCompact", False)])
def test_a_stop_answers_the_turns_prompt_with_its_reply(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, event: str, answered: bool
) -> None:
    handle_payload(graph, settings, _start("s-1"), "alice")
    graph.record_interaction("alice", "s-1", "which cache?", [], source="prompt", seq_from=0)
    transcript = ClaudeTranscript(tmp_path / "s-1.jsonl", "s-1")
    transcript.user("which cache?")
    transcript.assistant("Redis.")
    handle_payload(graph, settings, _event(event, "s-1", transcript.path), "alice")
    (row,) = graph.interactions("alice", "s-1", plain=True)
    assert row["answer"] == ("Redis." if answered else None)
