"""The Session / Action contract, run on every engine."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_graph import MemoryValidationError, SessionsGraph


def _action(i: int, kind: str = "user_message", **extra: Any) -> dict[str, Any]:
    return {"action_id": f"a-{i}", "action_type": kind, "text": f"step {i}", **extra}


def test_session_start_is_a_merge(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice", cwd="/home/alice/proj")
    graph.record_session_start("s-1", user_id="alice", project_key="proj")
    session = graph.get_session("s-1")
    assert session is not None
    assert session.user_id == "alice"
    assert (session.cwd, session.project_key) == ("/home/alice/proj", "proj")
    assert session.started_at is not None and session.ended_at is None
    assert session.reconciliation_status is None and session.action_count == 0
    assert graph.get_session("s-unknown") is None


def test_actions_keep_their_order_and_fields(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    new = graph.record_actions(
        "s-1",
        [
            _action(1, text="list the files", timestamp="2026-11-29T10:00:00Z"),
            _action(2, "tool_call", tool_name="Bash", tool_use_id="toolu_1", text='{"cmd": "ls"}'),
            _action(3, "tool_result", tool_use_id="toolu_1", text="No such file", is_error=True),
            _action(4, "assistant_message", text="There are no files."),
        ],
    )
    assert new == 4
    actions = graph.get_actions("s-1")
    assert [a.action_id for a in actions] == ["a-1", "a-2", "a-3", "a-4"]
    assert [a.seq for a in actions] == [0, 1, 2, 3]
    assert actions[0].timestamp == "2026-11-29T10:00:00.000000+00:00"  # one format
    assert (actions[1].tool_name, actions[1].tool_use_id) == ("Bash", "toolu_1")
    assert actions[2].is_error is True and actions[1].is_error is False
    assert graph.get_session("s-1").action_count == 4  # type: ignore[union-attr]


def test_recording_is_idempotent(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    assert graph.record_actions("s-1", [_action(1), _action(2)]) == 2
    # The same delivery again, then an overlapping one: only a-3 is new.
    assert graph.record_actions("s-1", [_action(1), _action(2)]) == 0
    assert graph.record_actions("s-1", [_action(2), _action(3)]) == 1
    assert [a.action_id for a in graph.get_actions("s-1")] == ["a-1", "a-2", "a-3"]
    assert [a.seq for a in graph.get_actions("s-1")] == [0, 1, 2]


def test_actions_for_an_unstarted_session_create_it(graph: SessionsGraph) -> None:
    assert graph.record_actions("s-late", [_action(1)], user_id="bob") == 1
    session = graph.get_session("s-late")
    assert session is not None and session.user_id == "bob"


def test_ending_a_session_queues_it(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    graph.record_session_start("s-2", user_id="alice")
    graph.record_actions("s-1", [_action(1)])
    assert graph.pending_sessions() == []
    assert graph.record_session_end("s-1") is True
    assert graph.mark_pending("s-2") is True
    # Oldest first: by end time, else start time (s-2 never ended).
    assert [s.session_id for s in graph.pending_sessions()] == ["s-2", "s-1"]
    ended = graph.get_session("s-1")
    assert ended is not None and ended.ended_at is not None
    assert ended.reconciliation_status == "pending"
    assert graph.record_session_end("s-nope") is False
    assert graph.mark_pending("s-nope") is False
    assert [s.session_id for s in graph.pending_sessions(limit=1)] == ["s-2"]


def test_pending_sessions_come_oldest_first(graph: SessionsGraph) -> None:
    for sid in ("s-a", "s-b", "s-c"):
        graph.record_session_start(sid, user_id="alice")
    for sid in ("s-c", "s-a", "s-b"):
        graph.record_session_end(sid)
    assert [s.session_id for s in graph.pending_sessions()] == ["s-c", "s-a", "s-b"]


def test_content_versions_count_changes(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    v0 = graph.get_session("s-1").content_version  # type: ignore[union-attr]
    graph.record_actions("s-1", [_action(1)])
    graph.record_actions("s-1", [_action(1)])  # nothing new: no change
    v1 = graph.get_session("s-1").content_version  # type: ignore[union-attr]
    graph.save_memory("alice", "learned", session_id="s-1")
    v2 = graph.get_session("s-1").content_version  # type: ignore[union-attr]
    assert v0 < v1 < v2
    assert v1 == v0 + 1


def test_sessions_of_one_user_cannot_be_taken_by_another(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    with pytest.raises(MemoryValidationError):
        graph.record_session_start("s-1", user_id="bob")
    assert graph.get_session("s-1").user_id == "alice"  # type: ignore[union-attr]


def test_import_cursor_round_trips(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    assert graph.engine.get_import_cursor("s-1") is None
    assert graph.import_cursor("s-1", "/t/a.jsonl") == 0
    graph.engine.set_import_cursor("s-1", "/t/a.jsonl", 1234, "4d2-0a1b2c3d")
    assert graph.engine.get_import_cursor("s-1") == ("/t/a.jsonl", 1234, "4d2-0a1b2c3d")
    assert graph.import_cursor("s-1", "/t/a.jsonl") == 1234
    assert graph.import_cursor("s-1", "/t/other.jsonl") == 0
    graph.set_import_cursor("s-1", "/t/other.jsonl", 0)  # a new source, nothing read yet
    cursor = graph.import_cursor_state("s-1")
    assert cursor is not None
    assert (cursor.source, cursor.offset, cursor.fingerprint) == ("/t/other.jsonl", 0, None)
    assert graph.engine.get_import_cursor("s-unknown") is None


@pytest.mark.parametrize(
    "bad",
    [
        {"action_id": "a-1", "action_type": "shell"},
        {"action_id": "bad id", "action_type": "user_message"},
        {"action_id": "a-1\x00", "action_type": "user_message"},
        {"action_type": "user_message"},
        {"action_id": "a-1", "action_type": "user_message", "text": 5},
        {"action_id": "a-1", "action_type": "tool_call", "tool_name": "x" * 600},
        "not a mapping",
    ],
)
def test_invalid_actions_are_rejected_whole(graph: SessionsGraph, bad: Any) -> None:
    graph.record_session_start("s-1", user_id="alice")
    with pytest.raises(MemoryValidationError):
        graph.record_actions("s-1", [_action(1), bad])
    assert graph.get_actions("s-1") == []


def test_long_action_text_is_cut_not_refused(graph: SessionsGraph) -> None:
    from sessions_graph.graph import MAX_ACTION_CHARS

    graph.record_actions("s-1", [_action(1, text="x" * (MAX_ACTION_CHARS + 10))], user_id="alice")
    assert len(graph.get_actions("s-1")[0].text) == MAX_ACTION_CHARS


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("2026-11-29T10:00:00.123Z", "2026-11-29T10:00:00.123000+00:00"),
        ("2026-11-29T10:00:00.123456789Z", "2026-11-29T10:00:00.123456+00:00"),
        ("2026-11-29T10:00:00.1+00:00", "2026-11-29T10:00:00.100000+00:00"),
        ("2026-11-29T12:00:00+02:00", "2026-11-29T10:00:00.000000+00:00"),
        ("2026-11-29T10:00:00", "2026-11-29T10:00:00.000000+00:00"),
        ("yesterday", None),
    ],
)
def test_action_timestamps_are_stored_in_one_format(
    graph: SessionsGraph, given: str, stored: str | None
) -> None:
    graph.record_actions("s-1", [_action(1, timestamp=given)], user_id="alice")
    assert graph.get_actions("s-1")[0].timestamp == stored


def test_a_lone_surrogate_in_agent_output_is_replaced_not_fatal(graph: SessionsGraph) -> None:
    graph.record_actions(
        "s-1",
        [_action(1, "tool_result", text="bytes \ud800 here"), _action(2, text="after")],
        user_id="alice",
    )
    actions = graph.get_actions("s-1")
    assert [a.text for a in actions] == ["bytes \ufffd here", "after"]


def test_recording_without_a_user_appends_for_the_sessions_owner(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice")
    assert graph.record_actions("s-1", [_action(1)]) == 1  # configured user is not alice
    with pytest.raises(MemoryValidationError):
        graph.record_actions("s-1", [_action(2)], user_id="bob")
    assert [a.action_id for a in graph.get_actions("s-1")] == ["a-1"]


def test_lone_surrogates_anywhere_in_a_session_are_replaced_not_fatal(
    graph: SessionsGraph,
) -> None:
    graph.record_session_start("s-1", user_id="alice", cwd="/src/\ud800", project_key="p\udfff")
    session = graph.get_session("s-1")
    assert session is not None
    assert (session.cwd, session.project_key) == ("/src/\ufffd", "p\ufffd")
    graph.set_import_cursor("s-1", "/t/\ud800.jsonl", 7)
    assert graph.import_cursor("s-1", "/t/\ud800.jsonl") == 7
    assert graph.entity_sessions("Orion\ud800", user_id="alice") == []


def test_a_batch_repeating_another_sessions_actions_records_the_rest(
    graph: SessionsGraph,
) -> None:
    """A resumed session's transcript repeats the earlier session's entries:
    those stay where they were first recorded; the new ones are recorded."""
    graph.record_session_start("s-1", user_id="alice")
    graph.record_actions("s-1", [_action(1), _action(2)])
    assert graph.record_actions("s-2", [_action(1), _action(2), _action(3)], user_id="alice") == 1
    report = graph.record_actions_report("s-2", [_action(2), _action(3), _action(4)])
    assert (report.added, report.foreign) == (1, 1)
    assert [a.action_id for a in graph.get_actions("s-2")] == ["a-3", "a-4"]
    assert [a.action_id for a in graph.get_actions("s-1")] == ["a-1", "a-2"]


def test_action_text_is_stored_redacted_with_its_count(graph: SessionsGraph) -> None:
    """Secrets never reach the store: an Action's text is redacted when it is
    recorded, and the action says how many secrets went."""
    graph.record_session_start("s-1", user_id="alice")
    graph.record_actions(
        "s-1",
        [
            _action(1, "tool_result", text="DB_PASSWORD=hunter2xyz\nAKIAIOSFODNN7EXAMPLE ok"),
            _action(2, text="nothing secret here"),
            _action(3, "tool_call", text='{"content": "stringData:\\n  password: lettersonly\\n"}'),
        ],
    )
    first, second, third = graph.get_actions("s-1")
    assert "hunter2xyz" not in first.text and "AKIAIOSFODNN7EXAMPLE" not in first.text
    assert first.text == "DB_PASSWORD=[REDACTED:password]\n[REDACTED:aws_access_key] ok"
    assert first.redactions == 2
    assert (second.text, second.redactions) == ("nothing secret here", 0)
    assert "lettersonly" not in third.text and third.redactions == 1


def test_user_action_counts_skip_actions_stored_already(graph: SessionsGraph) -> None:
    """An action recorded again, in its own session or another of the
    user's, is stored once and counted once; forgetting a session takes its
    actions off the count."""
    graph.record_actions("s-1", [_action(1), _action(2)], user_id="alice")
    graph.record_actions("s-1", [_action(2), _action(3)], user_id="alice")  # a-2 again
    graph.record_actions("s-2", [_action(3), _action(4)], user_id="alice")  # a-3 is s-1's
    graph.record_actions("s-b", [_action(1)], user_id="bob")  # bob's own a-1
    assert graph.status(user_id="alice")["counts"]["actions"] == 4
    assert graph.status(user_id="bob")["counts"]["actions"] == 1
    graph.forget_session("s-1")
    assert graph.status(user_id="alice")["counts"]["actions"] == 1


def test_user_counts_are_one_users_share(graph: SessionsGraph) -> None:
    for user, sid in (("alice", "s-a"), ("bob", "s-b")):
        graph.record_actions(sid, [_action(1 if user == "alice" else 2)], user_id=user)
        graph.save_memory(user, f"{user} likes Orion", session_id=sid)
    graph.save_memory("alice", "a memory of no session")
    counts = graph.status(user_id="alice")["counts"]
    assert counts == {"sessions": 1, "actions": 1, "memories": 2, "chunks": 0, "entities": 0}
    assert graph.status(user_id="carol")["counts"] == {
        "sessions": 0,
        "actions": 0,
        "memories": 0,
        "chunks": 0,
        "entities": 0,
    }
    assert graph.status()["counts"]["sessions"] == 2  # the whole store, for the application
