"""Guards for bugs that once passed the whole suite unseen, run on every engine.

Each test plants the data that makes its bug visible (another user's
memories, a sibling directory, a turn beyond the radius) and asserts what a
user would see: another user's data absent, a hit present or absent.
"""

from __future__ import annotations

from typing import Any

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import action_key


def turns(graph: SessionsGraph, session_id: str, user_id: str, *texts: str, **session: Any) -> None:
    """A session of alternating user / assistant turns ``<session_id>-<i>``."""
    graph.record_session_start(session_id, user_id=user_id, **session)
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


def mention(graph: SessionsGraph, kind: str, unit_id: str, chunk: str, name: str) -> None:
    """Reconciliation's result, written directly: ``unit_id``'s one chunk
    mentions the entity ``name``."""
    graph.engine.set_unit_chunks(kind, unit_id, f"c-{chunk}", [{"hash": chunk, "text": chunk}])
    graph.engine.save_extraction(chunk, "base", [{"name": name, "description": chunk}], [])


# -- forgetting a user ------------------------------------------------------------------


def test_forgetting_a_user_leaves_every_other_users_data(graph: SessionsGraph) -> None:
    turns(graph, "s-a", "alice", "alice plans the zebra release")
    turns(graph, "s-b", "bob", "bob plans the zebra release")
    graph.save_memory("alice", "alice keeps zebra notes")
    kept = [
        graph.save_memory("bob", "bob keeps zebra notes"),
        graph.save_memory("bob", "bob's zebra notes from his session", session_id="s-b"),
    ]
    mention(graph, "memory", kept[0].memory_id, "hb", "Zebra")

    counts = graph.forget_user("alice")

    assert counts["memories"] == 1 and counts["sessions"] == 1
    assert graph.get_memories("alice") == []
    assert {m.memory_id for m in graph.get_memories("bob")} == {m.memory_id for m in kept}
    assert graph.get_session("s-b") is not None
    recalled = graph.recall("bob", "zebra notes", scope="memories", limit=20).hits
    assert {h.memory_id for h in recalled if h.kind == "memory"} == {m.memory_id for m in kept}
    assert [r["name"] for r in graph.engine.recall_entities("bob", ["zebra"], 100)] == ["Zebra"]


# -- the second line of defence: the engine's own user checks ---------------------------


def test_an_entity_of_another_users_sessionless_memory_is_not_recalled(
    graph: SessionsGraph,
) -> None:
    bobs = graph.save_memory("bob", "bob's note on Quasar")
    mention(graph, "memory", bobs.memory_id, "hb", "Quasar")
    alices = graph.save_memory("alice", "alice's note on Vega")
    mention(graph, "memory", alices.memory_id, "ha", "Vega")

    assert graph.engine.recall_entities("alice", ["quasar"], 100) == []
    assert [r["name"] for r in graph.engine.recall_entities("alice", ["vega"], 100)] == ["Vega"]
    assert graph.recall("alice", "Quasar", scope="entities").hits == []
    assert [r["name"] for r in graph.engine.recall_entities("bob", ["quasar"], 100)] == ["Quasar"]


def test_an_entity_only_a_sessionless_memory_mentions_is_recalled(graph: SessionsGraph) -> None:
    bobs = graph.save_memory("bob", "bob's note on Quasar")
    mention(graph, "memory", bobs.memory_id, "hb", "Quasar")
    assert [h.entity for h in graph.recall("bob", "Quasar", scope="entities").hits] == ["Quasar"]


def test_turn_windows_of_another_users_turn_are_empty(graph: SessionsGraph) -> None:
    turns(graph, "s-a", "alice", "one", "two", "three")
    turns(graph, "s-b", "bob", "uno", "dos", "tres")

    assert graph.engine.turn_windows("alice", ["s-b-1"], 1) == []
    mine = graph.engine.turn_windows("alice", ["s-a-1", "s-b-1"], 1)
    assert sorted(r["action_id"] for r in mine) == ["s-a-0", "s-a-1", "s-a-2"]
    assert {r["hit_id"] for r in mine} == {"s-a-1"}


# -- recall's rules ---------------------------------------------------------------------


def test_a_project_does_not_take_in_a_sibling_directory(graph: SessionsGraph) -> None:
    turns(graph, "s-app", "alice", "the zebra cache", cwd="/src/app")
    turns(graph, "s-app2", "alice", "the zebra cache", cwd="/src/app2")
    turns(graph, "s-sub", "alice", "the zebra cache", cwd="/src/app/web")
    graph.save_memory("alice", "zebra cache memory", session_id="s-app2")

    hits = graph.recall("alice", "zebra cache", project="/src/app", limit=20).hits
    # The same text in two sessions is one hit naming the other (``also_in``).
    assert {s for h in hits for s in [h.session_id, *(h.also_in or [])]} == {"s-app", "s-sub"}


def test_the_asking_session_is_left_out_through_the_entity_lane(graph: SessionsGraph) -> None:
    turns(graph, "s-old", "alice", "we talked about Quasar")
    turns(graph, "s-now", "alice", "tell me about Quasar")
    mention(graph, "action", action_key("alice", "s-old-0"), "h-old", "Quasar")
    mention(graph, "action", action_key("alice", "s-now-0"), "h-now", "Quasar")

    hits = graph.recall("alice", "Quasar", session_id="s-now", scope="turns").hits
    assert [h.action_id for h in hits] == ["s-old-0"]
    entity = graph.recall("alice", "Quasar", session_id="s-now", scope="entities").hits
    assert [h.sessions for h in entity] == [["s-old"]]


def test_a_turn_is_shown_with_one_turn_each_side(graph: SessionsGraph) -> None:
    # Requests only: no reply makes an exchange of the hit, so it is shown
    # with its neighbours.
    graph.record_session_start("s-1", user_id="alice")
    texts = ("first", "second", "the zebra turn", "fourth", "fifth")
    graph.record_actions(
        "s-1",
        [
            {"action_id": f"s-1-{i}", "action_type": "user_message", "text": text}
            for i, text in enumerate(texts)
        ],
    )

    hits = graph.recall("alice", "zebra").hits
    assert hits[0].action_id == "s-1-2"
    assert all(w in hits[0].text for w in ("second", "zebra", "fourth"))
    assert "first" not in hits[0].text and "fifth" not in hits[0].text


def test_a_named_december_is_searched_in_its_own_year(graph: SessionsGraph) -> None:
    # Two texts, not one: identical texts would be one hit.
    for action_id, stamp, where in (
        ("dec23", "2023-12-20T10:00:00Z", "alps"),
        ("dec22", "2022-12-20T10:00:00Z", "dolomites"),
    ):
        graph.record_session_start(f"s-{action_id}", user_id="alice")
        graph.record_actions(
            f"s-{action_id}",
            [
                {
                    "action_id": action_id,
                    "action_type": "user_message",
                    "text": f"we went skiing in the {where}",
                    "timestamp": stamp,
                }
            ],
        )

    hits = graph.recall("alice", "where did we go skiing in December 2023?").hits
    assert hits[0].action_id == "dec23" and "dates" in hits[0].lanes
    assert "dates" not in next(h for h in hits if h.action_id == "dec22").lanes
