"""The embedded migration that keys actions per user (``schema.ACTION_KEYS``)
on a store written before it: its actions, turn index, chunks and entities
keep working, and another user can then record the same ids."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import schema
from sessions_graph.index_text.turns import turn_documents

#: The schema version before actions were keyed per user.
BEFORE = schema.MIGRATIONS.index(schema.ACTION_KEYS)
T0 = "2026-12-01T10:00:00.000000+00:00"
TEXTS = ("Which queue for orders?", "RabbitMQ, with durable queues.", "Thanks.")


def _old_store(path: Path) -> None:
    """alice's session s-a as the schema before wrote it: three actions, a
    turn document each, and t-1 chunked to h-1, which names the entity
    Rabbit (extracted)."""
    conn = sqlite3.connect(path, isolation_level=None)
    schema._add_recall_functions(conn)
    schema._add_origin_functions(conn)
    for script in schema.MIGRATIONS[:BEFORE]:
        for statement in schema._statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {BEFORE}")
    conn.execute("INSERT INTO users VALUES ('alice', ?)", (T0,))
    conn.execute(
        "INSERT INTO sessions(session_id, user_id, started_at, action_count,"
        " reconciliation_status) VALUES ('s-a', 'alice', ?, 3, 'reconciled')",
        (T0,),
    )
    rows = []
    for seq, text in enumerate(TEXTS):
        kind = "user_message" if seq % 2 == 0 else "assistant_message"
        conn.execute(
            "INSERT INTO actions(action_id, session_id, seq, action_type, text, timestamp)"
            " VALUES (?, 's-a', ?, ?, ?, ?)",
            (f"t-{seq}", seq, kind, text, T0),
        )
        rows.append({"action_id": f"t-{seq}", "seq": seq, "action_type": kind, "text": text})
    for doc in turn_documents(rows, 0):
        rowid = conn.execute(
            "INSERT INTO turn_docs(action_id, user_id, session_id, action_type, timestamp)"
            " VALUES (?, 'alice', 's-a', 'user_message', ?)",
            (doc["action_id"], T0),
        ).lastrowid
        conn.execute(
            "INSERT INTO turns_fts(rowid, body, context) VALUES (?, ?, ?)",
            (rowid, doc["body"], doc["context"]),
        )
    conn.execute("INSERT INTO chunks VALUES ('h-1', 'RabbitMQ, with durable queues.')")
    conn.execute("INSERT INTO unit_chunks VALUES ('action', 't-1', 'h-1', 0)")
    conn.execute("INSERT INTO unit_hashes VALUES ('action', 't-1', 'c-1')")
    conn.execute("INSERT INTO chunk_extractions VALUES ('h-1', 'base', 'llm', ?)", (T0,))
    conn.execute("INSERT INTO entities VALUES (1, 'base', 'Rabbit', 'rabbit', 'tool')")
    conn.execute("INSERT INTO mentions VALUES (1, 'h-1', 'base', 'tool', 'the broker')")
    conn.close()


def _check_migrated(graph: SessionsGraph) -> None:
    assert [(a.action_id, a.text) for a in graph.get_actions("s-a")] == [
        (f"t-{i}", t) for i, t in enumerate(TEXTS)
    ]
    hits = graph.recall("alice", "rabbitmq durable", scope="turns").hits
    assert hits[0].action_id == "t-1" and {h.session_id for h in hits} == {"s-a"}
    units = graph.engine.reconcilable_units("s-a")
    assert [u["content_hash"] for u in units] == [None, "c-1", None]  # t-1's chunking kept
    assert graph.engine.unextracted_chunks("s-a", "base") == []  # h-1 still extracted
    [rabbit] = graph.engine.recall_entities("alice", ["rabbit"], 10)
    assert [(u["unit_id"], u["session_id"]) for u in rabbit["units"]] == [("t-1", "s-a")]
    assert [m.name for m in graph.session_entities("s-a")] == ["Rabbit"]


def test_an_old_stores_actions_index_and_chunks_work_after_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_store(path)
    graph = SessionsGraph(db=str(path))  # migrates
    try:
        assert graph.status()["schema_version"] == schema.SCHEMA_VERSION
        _check_migrated(graph)

        # bob records the same ids: his own actions, alice's untouched.
        graph.record_session_start("s-b", user_id="bob")
        bobs = [
            {"action_id": f"t-{i}", "action_type": "user_message", "text": "Kafka"} for i in (0, 1)
        ]
        assert graph.record_actions("s-b", bobs, user_id="bob") == 2
        _check_migrated(graph)

        # Forgetting alice's session takes its documents, chunks and entity
        # (the delete triggers, made again on the key), and nothing of bob's.
        graph.forget_session("s-a")
        counts = graph.status()["counts"]
        assert (counts["actions"], counts["chunks"], counts["entities"]) == (2, 0, 0)
        assert graph.recall("alice", "rabbitmq durable", scope="turns").hits == []
        assert {h.session_id for h in graph.recall("bob", "kafka", scope="turns").hits} == {"s-b"}
        assert graph.engine._read("SELECT count(*) FROM turn_docs")[0][0] == 2  # type: ignore[attr-defined]
    finally:
        graph.close()


def test_a_store_keyed_already_but_numbered_older_keeps_working(tmp_path: Path) -> None:
    """A file whose version says the migration is to come but whose actions
    are keyed (numbered otherwise by a build between releases) keeps them."""
    path = tmp_path / "old.db"
    _old_store(path)
    SessionsGraph(db=str(path)).close()  # migrates
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(f"PRAGMA user_version = {BEFORE}")
    conn.close()
    graph = SessionsGraph(db=str(path))
    try:
        assert graph.status()["schema_version"] == schema.SCHEMA_VERSION
        _check_migrated(graph)
        graph.forget_session("s-a")
        assert graph.status()["counts"]["chunks"] == 0
        assert graph.engine._read("SELECT count(*) FROM turn_docs")[0][0] == 0  # type: ignore[attr-defined]
    finally:
        graph.close()
