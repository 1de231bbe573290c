"""The injection ledger, on every engine: what the hook injected, per user
and session, and that forgetting removes it."""

from __future__ import annotations

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.errors import MemoryValidationError
from sessions_graph.hooks.inject import context_for


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
        # No prompt asked for it: nothing an answer used.
        "interaction_id": None,
        "used": None,
        "used_share": None,
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
    _start(graph, "s-4", "alice")
    graph.record_injection("alice", "s-4", "SessionStart", ["turn:e"], 75)
    # An even number of sessions: the mean of the middle two (60 and 75).
    assert graph.injection_stats("alice", "2000-01-01T00:00:00Z")["session_median"] == 67.5
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


def _exchange(graph: SessionsGraph, sid: str, request: str, reply: str) -> None:
    graph.record_session_start(sid, user_id="alice")
    graph.record_actions(
        sid,
        [
            {"action_id": f"{sid}-0", "action_type": "user_message", "text": request},
            {"action_id": f"{sid}-1", "action_type": "assistant_message", "text": reply},
        ],
        user_id="alice",
    )


def _prompt(graph: SessionsGraph, sid: str, prompt: str) -> str | None:
    """What the prompt hook injects for ``prompt`` (it records the prompt's
    interaction and the ledger row)."""
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": sid, "prompt": prompt}
    return context_for(graph, graph.settings, payload, "alice")


def test_a_prompts_row_shows_how_much_of_it_the_answer_used(graph: SessionsGraph) -> None:
    """Each prompt's injection is joined to the interaction recorded for
    that prompt: how many of its items (one per hit) the answer used."""
    _exchange(graph, "old", "Which backend for the orion cache?", "memcached on port 11211.")
    _exchange(graph, "new", "Revisit the orion cache backend", "valkey 8.0.1 in cluster mode.")
    _exchange(graph, "ci", "Why is the deploy pipeline slow?", "The pipeline rebuilds wheels.")
    _start(graph, "app-1", "alice")
    graph.record_injection("alice", "app-1", "SessionStart", ["memory:m0"], 30)

    assert _prompt(graph, "app-1", "Which backend does the orion cache use?")
    [cache_row, start_row] = graph.injections("alice", "app-1")
    [cache] = graph.interactions("alice", "app-1")
    assert cache_row["interaction_id"] == cache.interaction_id
    assert len(cache.context) == 2
    assert {f"turn:{item.id}" for item in cache.context} <= set(cache_row["item_ids"])
    assert (cache_row["used"], cache_row["used_share"]) == (None, None)  # not answered yet

    graph.record_answer(cache.interaction_id, "valkey 8.0.1, in cluster mode.", user_id="alice")
    assert _prompt(graph, "app-1", "Why is the deploy pipeline slow?")
    ci = graph.interactions("alice", "app-1")[0]
    graph.record_answer(ci.interaction_id, "No idea, let me look.", user_id="alice")

    # A compaction's SessionStart shows the session's own story: no prompt's.
    graph.record_injection(
        "alice", "app-1", "SessionStart", [f"interaction:{ci.interaction_id}"], 50
    )

    resumed_row, ci_row, cache_row, start_row = graph.injections("alice", "app-1")
    # Each row joins its own prompt's interaction, not the session's latest.
    assert (ci_row["interaction_id"], ci_row["used"], ci_row["used_share"]) == (
        ci.interaction_id,
        0,
        0.0,
    )
    assert (cache_row["interaction_id"], cache_row["used"], cache_row["used_share"]) == (
        cache.interaction_id,
        1,
        0.5,
    )
    for row in (start_row, resumed_row):
        assert (row["interaction_id"], row["used"], row["used_share"]) == (None, None, None)
    # Another user's ledger joins nothing of alice's.
    _start(graph, "bob-1", "bob")
    graph.record_injection("bob", "bob-1", "UserPromptSubmit", cache_row["item_ids"], 40)
    [bobs] = graph.injections("bob")
    assert (bobs["interaction_id"], bobs["used"], bobs["used_share"]) == (None, None, None)
