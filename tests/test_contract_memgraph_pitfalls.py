"""Guarantees that are easy to lose on Memgraph, checked on every engine.

Memgraph's ``text_search`` procedures cut their results at a limit *before*
a ``WHERE`` after the call can filter by user; these tests make sure other
users' matches can never push a user's own out of the results.
"""

from __future__ import annotations

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.engines.memgraph import MemgraphEngine

#: The text-search limit the tests lower the engine to, so that they need
#: only a few memories to exceed it.
SMALL_LIMIT = 5


@pytest.fixture
def crowded(graph: SessionsGraph) -> SessionsGraph:
    """Many more matching memories from other users than the search limit."""
    if isinstance(graph.engine, MemgraphEngine):
        # Memgraph's text search cuts at this limit before the user filter;
        # the embedded engine has no such limit (its one LIMIT applies after
        # the user condition, in the same query).
        graph.engine.search_limit = SMALL_LIMIT
    for i in range(SMALL_LIMIT * 4):
        graph.save_memory(user_id=f"other-{i % 3}", content=f"zebra crossing number {i}")
    graph.save_memory(user_id="alice", content="Alice saw a zebra at the zoo")
    return graph


def test_own_match_survives_other_users_matches(crowded: SessionsGraph) -> None:
    results = crowded.search_memories("alice", "zebra", limit=SMALL_LIMIT)
    assert [m.content for m in results] == ["Alice saw a zebra at the zoo"]


def test_own_prefix_match_survives_other_users_matches(crowded: SessionsGraph) -> None:
    results = crowded.search_memories("alice", "zeb*", limit=SMALL_LIMIT)
    assert [m.content for m in results] == ["Alice saw a zebra at the zoo"]


def test_boolean_query_stays_within_the_user(crowded: SessionsGraph) -> None:
    assert crowded.search_memories("alice", "zebra AND NOT crossing")
    assert crowded.search_memories("alice", "crossing") == []


def test_a_user_sees_all_own_matches_up_to_the_limit(crowded: SessionsGraph) -> None:
    results = crowded.search_memories("other-0", "zebra", limit=100)
    assert len(results) == len(range(0, SMALL_LIMIT * 4, 3))  # more than SMALL_LIMIT
    assert {m.user_id for m in results} == {"other-0"}
