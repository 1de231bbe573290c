"""Backfill: sessions loaded from history keep their real start, on every engine."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from sessions_graph import MemoryValidationError, SessionsGraph


def _started(graph: SessionsGraph, session_id: str) -> str | None:
    session = graph.get_session(session_id)
    assert session is not None
    return session.started_at


def test_started_at_dates_a_new_session(graph: SessionsGraph) -> None:
    graph.record_session_start("s-old", user_id="alice", started_at="2026-10-01T09:30:00Z")
    assert _started(graph, "s-old") == "2026-10-01T09:30:00.000000+00:00"
    moment = datetime(2026, 10, 2, 11, 0, tzinfo=timezone(timedelta(hours=2)))
    graph.record_session_start("s-dt", user_id="alice", started_at=moment)
    assert _started(graph, "s-dt") == "2026-10-02T09:00:00.000000+00:00"
    # A naive datetime or a timestamp without offset is UTC.
    graph.record_session_start("s-naive", user_id="alice", started_at=datetime(2026, 10, 3, 8))
    graph.record_session_start("s-text", user_id="alice", started_at="2026-10-03T08:00:00.5")
    assert _started(graph, "s-naive") == "2026-10-03T08:00:00.000000+00:00"
    assert _started(graph, "s-text") == "2026-10-03T08:00:00.500000+00:00"


def test_a_session_keeps_its_earliest_start(graph: SessionsGraph) -> None:
    # Hooks saw the session first (started now); the history import knows better.
    graph.record_session_start("s-1", user_id="alice", cwd="/src/app")
    hooked = _started(graph, "s-1")
    assert hooked is not None and hooked > "2026-11-01"
    graph.record_session_start("s-1", user_id="alice", started_at="2026-10-01T09:30:00Z")
    assert _started(graph, "s-1") == "2026-10-01T09:30:00.000000+00:00"
    # A later start (a resumed session, a hook after the import) changes nothing.
    graph.record_session_start("s-1", user_id="alice")
    graph.record_session_start("s-1", user_id="alice", started_at="2026-10-05T00:00:00Z")
    assert _started(graph, "s-1") == "2026-10-01T09:30:00.000000+00:00"
    assert graph.get_session("s-1").cwd == "/src/app"  # type: ignore[union-attr]


def test_a_session_created_by_its_actions_takes_an_earlier_start(graph: SessionsGraph) -> None:
    action = {
        "action_id": "a-1",
        "action_type": "user_message",
        "text": "hi",
        "timestamp": "2026-10-01T10:00:00Z",
    }
    graph.record_actions("s-1", [action], user_id="alice")
    assert _started(graph, "s-1") == "2026-10-01T10:00:00.000000+00:00"
    graph.record_session_start("s-1", user_id="alice", started_at="2026-10-01T09:59:00Z")
    assert _started(graph, "s-1") == "2026-10-01T09:59:00.000000+00:00"


@pytest.mark.parametrize(
    "bad", ["yesterday", "", "2026-13-01T00:00:00Z", "2026-10-01T00:00:00Z" + " " * 60, 1700000000]
)
def test_a_bad_start_is_refused_and_changes_nothing(graph: SessionsGraph, bad: object) -> None:
    with pytest.raises(MemoryValidationError, match="started_at"):
        graph.record_session_start("s-bad", user_id="alice", started_at=bad)  # type: ignore[arg-type]
    assert graph.get_session("s-bad") is None


def test_another_users_session_is_not_redated(graph: SessionsGraph) -> None:
    graph.record_session_start("s-1", user_id="alice", started_at="2026-10-02T00:00:00Z")
    with pytest.raises(MemoryValidationError):
        graph.record_session_start("s-1", user_id="bob", started_at="2026-01-01T00:00:00Z")
    assert _started(graph, "s-1") == "2026-10-02T00:00:00.000000+00:00"
