"""The injection ledger, on every engine: what the hook injected, per user
and session, and that forgetting removes it."""

from __future__ import annotations

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.errors import MemoryValidationError


def _start(graph: SessionsGraph, sid: str, user: str) -> None:
    graph.record_session_start(sid, user_id=user, cwd="/src/app", project_key="app")


def test_recorded_rows_come_back_per_session_newest_first(graph: SessionsGraph) -> None:
    _start(graph, "s-1", "alice")
    _start(graph, "s-2", "alice")
    first = graph.record_injection("alice", "s-1", "SessionStart", ["turn:a1", "memory:m1"], 120)
    second = graph.record_injection("alice", "s-1", "UserPromptSubmit", ["turn:b7"], 40)
    graph.record_injection("alice", "s-2", "SessionStart", ["turn:c3"], 75)

    assert graph.injected_items("alice", "s-1") == {"turn:a1", "memory:m1", "turn:b7"}
    assert graph.injected_items("alice", "s-2") == {"turn:c3"}
    assert graph.injected_items("alice", "s-unknown") == set()

    rows = graph.injections("alice", "s-1")
    assert [r["injection_id"] for r in rows] == [second["injection_id"], first["injection_id"]]
    assert rows[1] == {
        "injection_id": first["injection_id"],
        "user_id": "alice",
        "session_id": "s-1",
        "event": "SessionStart",
        "injected_at": first["injected_at"],
        "item_ids": ["turn:a1", "memory:m1"],
        "tokens": 120,
    }
    assert len(graph.injections("alice")) == 3
    assert len(graph.injections("alice", limit=1)) == 1


def test_one_users_rows_are_never_anothers(graph: SessionsGraph) -> None:
    _start(graph, "s-a", "alice")
    _start(graph, "s-b", "bob")
    graph.record_injection("alice", "s-a", "SessionStart", ["turn:x"], 10)
    graph.record_injection("bob", "s-b", "SessionStart", ["turn:y"], 20)

    assert graph.injected_items("bob", "s-a") == set()  # alice's session, asked as bob
    assert graph.injected_items("alice", "s-b") == set()
    assert [r["session_id"] for r in graph.injections("bob")] == ["s-b"]
    assert graph.injections("bob", "s-a") == []
    assert graph.injection_stats("bob", "2000-01-01T00:00:00Z")["tokens_since"] == 20


def test_stats_sum_tokens_since_a_time_and_per_session(graph: SessionsGraph) -> None:
    for sid in ("s-1", "s-2", "s-3"):
        _start(graph, sid, "alice")
    graph.record_injection("alice", "s-1", "SessionStart", ["turn:a"], 100)
    graph.record_injection("alice", "s-1", "UserPromptSubmit", ["turn:b"], 50)
    graph.record_injection("alice", "s-2", "SessionStart", ["turn:c"], 30)
    graph.record_injection("alice", "s-3", "SessionStart", ["turn:d"], 60)

    stats = graph.injection_stats("alice", "2000-01-01T00:00:00Z")
    assert stats == {"tokens_since": 240, "sessions": 3, "session_median": 60, "session_max": 150}
    assert graph.injection_stats("alice", "2999-01-01T00:00:00Z")["tokens_since"] == 0
    assert graph.injection_stats("carol", "2000-01-01T00:00:00Z") == {
        "tokens_since": 0,
        "sessions": 0,
        "session_median": 0,
        "session_max": 0,
    }


def test_forget_session_and_forget_user_remove_the_rows(graph: SessionsGraph) -> None:
    for sid, user in (("s-1", "alice"), ("s-2", "alice"), ("s-b", "bob")):
        _start(graph, sid, user)
        graph.record_injection(user, sid, "SessionStart", [f"turn:{sid}"], 10)
    graph.record_injection("alice", "s-2", "UserPromptSubmit", ["turn:z"], 5)

    counts = graph.forget_session("s-1")
    assert counts["injections"] == 1
    assert graph.injected_items("alice", "s-1") == set()
    assert [r["session_id"] for r in graph.injections("alice")] == ["s-2", "s-2"]

    counts = graph.forget_user("alice")
    assert counts["injections"] == 2
    assert graph.injections("alice") == []
    assert graph.injection_stats("alice", "2000-01-01T00:00:00Z")["sessions"] == 0
    assert graph.injected_items("bob", "s-b") == {"turn:s-b"}  # bob's stay


def test_bad_ledger_input_is_refused_and_stores_nothing(graph: SessionsGraph) -> None:
    _start(graph, "s-1", "alice")
    for args in (
        ("alice", "s-1", "", ["turn:a"], 1),
        ("alice", "s-1", "SessionStart", "turn:a", 1),
        ("alice", "s-1", "SessionStart", [""], 1),
        ("alice", "s-1", "SessionStart", ["turn:a"], -1),
        ("alice", "bad id!", "SessionStart", ["turn:a"], 1),
    ):
        with pytest.raises(MemoryValidationError):
            graph.record_injection(*args)  # type: ignore[arg-type]
    assert graph.injections("alice") == []
