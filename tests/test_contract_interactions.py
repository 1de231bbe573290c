"""The interactions and feedback contract, run on every engine: recording,
answering, TTL expiry, session-first recall, feedback validation, the EMA,
per-user isolation and forgetting."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_graph import MemoryValidationError, SessionsGraph


def turns(graph: SessionsGraph, session_id: str, user_id: str, *texts: str) -> None:
    graph.record_session_start(session_id, user_id=user_id)
    graph.record_actions(
        session_id,
        [
            {
                "action_id": f"{session_id}-{i}",
                "action_type": "user_message" if i % 2 == 0 else "assistant_message",
                "text": text,
            }
            for i, text in enumerate(texts)
        ],
        user_id=user_id,
    )


def history(graph: SessionsGraph, user_id: str = "alice") -> None:
    """Two past sessions that both answer a question about the cache."""
    turns(
        graph,
        f"{user_id}-old",
        user_id,
        "Which backend for the orion cache?",
        "The orion cache backend is memcached on port 11211.",
    )
    turns(
        graph,
        f"{user_id}-new",
        user_id,
        "Revisit the orion cache backend please",
        "The orion cache backend is now valkey 8.0.1 in cluster mode.",
    )


def settings(graph: SessionsGraph, **values: Any) -> None:
    for key, value in values.items():
        setattr(graph.settings, key, value)


def test_a_recall_with_a_session_is_an_interaction_answered_later(graph: SessionsGraph) -> None:
    history(graph)
    result = graph.recall("alice", "orion cache backend", session_id="app-1")
    assert result.interaction_id is not None
    assert graph.recall("alice", "orion cache backend").interaction_id is None

    [recorded] = graph.interactions("alice", "app-1")
    assert recorded.question == "orion cache backend"
    assert recorded.source == "recall"
    # An exchange hit gives one item per turn it shows.
    given = [a for h in result.hits if h.kind == "turn" for a in h.exchange or [h.action_id]]
    assert [item.id for item in recorded.context] == given
    assert all(item.used is None for item in recorded.context)
    assert recorded.answer is None

    answer = "Use valkey 8.0.1 in cluster mode, as decided."
    answered = graph.record_answer(result.interaction_id, answer, user_id="alice")
    assert answered is not None and answered.answer == answer
    used = {item.id for item in answered.context if item.used}
    # The answer names "8.0.1" (a version of one turn, not in the question).
    assert used == {"alice-new-1"}
    assert graph.interactions("alice", "app-1")[0].answer == answer
    # Another user cannot answer it.
    assert graph.record_answer(result.interaction_id, "x", user_id="bob") is None


def test_interactions_are_listed_newest_first_per_session(graph: SessionsGraph) -> None:
    history(graph)
    first = graph.recall("alice", "orion cache", session_id="app-1").interaction_id
    second = graph.recall("alice", "cache backend", session_id="app-1").interaction_id
    other = graph.recall("alice", "orion backend", session_id="app-2").interaction_id
    assert [i.interaction_id for i in graph.interactions("alice", "app-1")] == [second, first]
    assert [i.interaction_id for i in graph.interactions("alice")] == [other, second, first]
    assert graph.interactions("bob", "app-1") == []


def test_expired_interactions_are_never_returned_and_the_sweep_deletes_them(
    graph: SessionsGraph,
) -> None:
    history(graph)
    settings(graph, session_cache_ttl_s=1)
    short = graph.recall("alice", "orion cache", session_id="app-1").interaction_id
    settings(graph, session_cache_ttl_s=0)  # 0 keeps them
    kept = graph.recall("alice", "orion cache", session_id="app-1").interaction_id
    graph.feedback("alice", short, 1)
    lowered = graph.feedback_weights("alice", ["turn:alice-new-1"])["turn:alice-new-1"]
    assert lowered < 0.5

    import time

    time.sleep(1.1)
    assert [i.interaction_id for i in graph.interactions("alice", "app-1")] == [kept]
    with pytest.raises(MemoryValidationError, match="not found"):
        graph.feedback("alice", short, 5)
    assert graph.record_answer(short, "late", user_id="alice") is None
    assert graph.expire_interactions() == 1
    assert graph.expire_interactions() == 0
    assert [i.interaction_id for i in graph.interactions("alice")] == [kept]
    # What the expired one taught stays.
    assert graph.feedback_weights("alice", ["turn:alice-new-1"])["turn:alice-new-1"] == lowered


def test_session_first_recall_puts_the_sessions_interactions_first(graph: SessionsGraph) -> None:
    history(graph)
    asked = graph.recall("alice", "orion cache backend", session_id="app-1")
    graph.record_answer(asked.interaction_id, "valkey in cluster mode", user_id="alice")
    graph.recall("alice", "unrelated lint settings", session_id="app-1")
    graph.recall("alice", "orion cache backend", session_id="app-other")

    again = graph.recall("alice", "which orion cache backend", session_id="app-1")
    kinds = [h.kind for h in again.hits]
    assert kinds[0] == "interaction"
    assert again.hits[0].interaction_id == asked.interaction_id
    assert "valkey in cluster mode" in again.hits[0].text
    # Only this session's matching interactions, then the long-term lanes.
    assert kinds.count("interaction") == 1
    assert "turn" in kinds[1:]
    # scope "all" (or no session) is long-term only.
    assert {h.kind for h in graph.recall("alice", "orion cache", scope="all").hits} == {"turn"}
    with pytest.raises(MemoryValidationError, match="session_id"):
        graph.recall("alice", "orion cache", scope="interactions")


@pytest.mark.parametrize("score", [0, 6, -1, 2.5, "5", True, None])
def test_feedback_takes_only_an_integer_from_1_to_5(graph: SessionsGraph, score: Any) -> None:
    history(graph)
    asked = graph.recall("alice", "orion cache backend", session_id="app-1")
    with pytest.raises(MemoryValidationError, match="1 to 5"):
        graph.feedback("alice", asked.interaction_id, score)
    assert graph.interactions("alice", "app-1")[0].feedback is None
    keys = [f"turn:{h.action_id}" for h in asked.hits if h.kind == "turn"]
    assert set(graph.feedback_weights("alice", keys).values()) == {0.5}


def test_feedback_moves_each_context_weight_by_the_ema(graph: SessionsGraph) -> None:
    history(graph)
    settings(graph, feedback_alpha=0.3)
    asked = graph.recall("alice", "orion cache backend", session_id="app-1")
    keys = [f"turn:{h.action_id}" for h in asked.hits if h.kind == "turn"]
    assert keys and all(h.feedback_weight == 0.5 for h in asked.hits)

    rated = graph.feedback("alice", asked.interaction_id, 5)
    assert rated.feedback == 5
    assert graph.interactions("alice", "app-1")[0].feedback == 5
    expected = 0.5 + 0.3 * (1.0 - 0.5)  # 0.65
    assert graph.feedback_weights("alice", keys) == pytest.approx(dict.fromkeys(keys, expected))
    graph.feedback("alice", asked.interaction_id, 1)
    expected = expected + 0.3 * (0.0 - expected)  # 0.455
    assert graph.feedback_weights("alice", keys) == pytest.approx(dict.fromkeys(keys, expected))
    graph.feedback("alice", asked.interaction_id, 3)
    expected = expected + 0.3 * (0.5 - expected)
    assert graph.feedback_weights("alice", keys) == pytest.approx(dict.fromkeys(keys, expected))
    # The weight clips at 1 however often the answer is praised.
    for _ in range(60):
        graph.feedback("alice", asked.interaction_id, 5)
    assert all(0.99 < w <= 1.0 for w in graph.feedback_weights("alice", keys).values())
    hits = graph.recall("alice", "orion cache backend").hits
    assert {h.feedback_weight for h in hits if f"turn:{h.action_id}" in keys} == {
        graph.feedback_weights("alice", keys)[keys[0]]
    }


def test_feedback_changes_the_ranking_only_with_influence(graph: SessionsGraph) -> None:
    history(graph)
    settings(graph, feedback_influence=0.0)

    def order() -> list[tuple[str, ...]]:
        # Each hit by the turns it shows (an exchange is one hit).
        hits = graph.recall("alice", "orion cache backend").hits
        return [tuple(h.exchange or [h.action_id or ""]) for h in hits]

    before = order()
    loser = before[0]
    # Rate down an interaction that was given only the best hit.
    for _ in range(5):
        one = graph.recall("alice", "orion cache backend", session_id="s", limit=1, scope="all")
        assert [tuple(h.exchange or [h.action_id or ""]) for h in one.hits] == [loser]
        graph.feedback("alice", one.interaction_id, 1)
    assert order() == before
    settings(graph, feedback_influence=0.5)
    after = order()
    assert after.index(loser) > before.index(loser)


def test_weights_are_per_user(graph: SessionsGraph) -> None:
    history(graph, "alice")
    history(graph, "bob")
    settings(graph, feedback_influence=0.5)
    bob_before = [h.action_id for h in graph.recall("bob", "orion cache backend").hits]
    asked = graph.recall("alice", "orion cache backend", session_id="a-1")
    for _ in range(5):
        graph.feedback("alice", asked.interaction_id, 1)
    # bob cannot rate alice's interaction, and his ranking and weights are untouched.
    with pytest.raises(MemoryValidationError, match="not found"):
        graph.feedback("bob", asked.interaction_id, 5)
    assert [h.action_id for h in graph.recall("bob", "orion cache backend").hits] == bob_before
    bob_keys = [f"turn:{a}" for a in bob_before]
    assert set(graph.feedback_weights("bob", bob_keys).values()) == {0.5}
    assert graph.interactions("bob") == []
    # An element key alice rated, asked for bob, is bob's own (neutral).
    alice_keys = [item.key for item in graph.interactions("alice")[0].context]
    assert set(graph.feedback_weights("bob", alice_keys).values()) == {0.5}


def test_forgetting_removes_interactions_and_weights(graph: SessionsGraph) -> None:
    history(graph)
    history(graph, "bob")
    in_session = graph.recall("alice", "orion cache backend", session_id="alice-new")
    elsewhere = graph.recall("alice", "orion cache backend", session_id="app-2")
    graph.feedback("alice", in_session.interaction_id, 5)
    graph.feedback("alice", elsewhere.interaction_id, 5)
    bobs = graph.recall("bob", "orion cache backend", session_id="bob-new")
    graph.feedback("bob", bobs.interaction_id, 5)

    graph.forget_session("alice-new")
    assert graph.interactions("alice", "alice-new") == []
    assert len(graph.interactions("alice", "app-2")) == 1
    weights = graph.feedback_weights("alice", ["turn:alice-new-1", "turn:alice-old-1"])
    assert weights["turn:alice-new-1"] == 0.5  # the session's own turn: gone
    assert weights["turn:alice-old-1"] > 0.5  # another session's: kept

    graph.forget_user("alice")
    assert graph.interactions("alice") == []
    assert graph.feedback_weights("alice", ["turn:alice-old-1"])["turn:alice-old-1"] == 0.5
    # bob's stay.
    assert len(graph.interactions("bob")) == 1
    assert graph.feedback_weights("bob", ["turn:bob-old-1"])["turn:bob-old-1"] > 0.5


def test_usage_counts_what_answers_used(graph: SessionsGraph) -> None:
    history(graph)
    asked = graph.recall("alice", "orion cache backend", session_id="app-1")
    graph.recall("alice", "orion cache", session_id="app-1")
    graph.record_answer(asked.interaction_id, "It is valkey 8.0.1 now.", user_id="alice")
    [row] = graph.status("alice")["interactions"]
    given = len(graph.interactions("alice", "app-1")[1].context)
    assert row == {
        "session_id": "app-1",
        "interactions": 2,
        "answered": 1,
        "rated": 0,
        "items": given,
        "used": 1,
        "used_share": round(1 / given, 3),
    }
    assert graph.status("bob")["interactions"] == []
