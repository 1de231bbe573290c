"""Migration 12 on a store written before origins were kept: the echoes and
the client boilerplate already stored are marked, leave the turn index and
take the entities only they held with them; setup says how many."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.engines.sqlite.schema import MIGRATIONS, _add_recall_functions, _statements
from sessions_graph.hooks.transcript import import_actions
from sessions_graph.index_text.turns import turn_documents

FIXTURE = Path(__file__).parent / "fixtures" / "context" / "codex" / "relevant-past.jsonl"
#: The schema version before origins.
BEFORE = 11


def _old_store(path: Path) -> list[dict]:
    """A store at schema 11 holding a Codex session as that version stored
    it: every action indexed, and an entity extracted from our own injected
    block only (reconcile linked it to a session that never discussed it)."""
    actions = import_actions(FIXTURE, 0, "cx-old").actions
    conn = sqlite3.connect(path, isolation_level=None)
    _add_recall_functions(conn)
    for script in MIGRATIONS[:BEFORE]:
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {BEFORE}")
    conn.execute("INSERT INTO users VALUES ('alice', '2026-12-01T00:00:00Z')")
    conn.execute(
        "INSERT INTO sessions(session_id, user_id, started_at, project_key, action_count,"
        " reconciliation_status) VALUES ('cx-old', 'alice', '2026-12-01T00:00:00Z', 'orion', ?,"
        " 'reconciled')",
        (len(actions),),
    )
    rows = []
    for seq, a in enumerate(actions):
        conn.execute(
            "INSERT INTO actions(action_id, session_id, seq, action_type, text, timestamp,"
            " tool_name, tool_use_id) VALUES (?, 'cx-old', ?, ?, ?, ?, ?, ?)",
            (
                a["action_id"],
                seq,
                a["action_type"],
                a["text"],
                a["timestamp"],
                a["tool_name"],
                a["tool_use_id"],
            ),
        )
        rows.append({**a, "seq": seq})
    # The turn index as version 11 wrote it: every action a document.
    for doc in turn_documents(rows, 0):
        rowid = conn.execute(
            "INSERT INTO turn_docs(action_id, user_id, session_id, action_type) VALUES"
            " (?, 'alice', 'cx-old', 'x')",
            (doc["action_id"],),
        ).lastrowid
        conn.execute(
            "INSERT INTO turns_fts(rowid, body, context) VALUES (?, ?, ?)",
            (rowid, doc["body"], doc["context"]),
        )
    injected = next(a for a in actions if a["text"].startswith("<sessions-graph-memory"))
    conn.execute("INSERT INTO chunks VALUES ('h-injected', 'Postgres pooler')")
    conn.execute(
        "INSERT INTO unit_chunks VALUES ('action', ?, 'h-injected', 0)", (injected["action_id"],)
    )
    conn.execute("INSERT INTO entities VALUES (1, 'base', 'Postgres', 'postgres', 'tool')")
    conn.execute("INSERT INTO mentions VALUES (1, 'h-injected', 'base', 'tool', 'a database')")
    conn.close()
    return actions


def test_stored_echoes_are_marked_unindexed_and_their_entities_go(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    actions = _old_store(path)
    kept_out = {a["action_id"] for a in actions if a["action_type"] == "system_message"}
    assert len(kept_out) == 7  # 5 client blocks and 2 of our injected ones

    engine = SQLiteEngine(path)  # migrates
    try:
        origins = {a["action_id"]: a["origin"] for a in engine.get_actions("cx-old")}
        assert sum(o == "derived" for o in origins.values()) == 2
        assert sum(o == "client" for o in origins.values()) == 5
        indexed = {r[0] for r in engine._read("SELECT action_id FROM turn_docs")}
        assert indexed == {i for i, o in origins.items() if o == "conversation"}
        # No conversation document carries the echoes' words as context either.
        contexts = " ".join(r[0] for r in engine._read("SELECT context FROM turns_fts"))
        assert "skills" not in contexts and "recorded" not in contexts
        assert engine._read("SELECT count(*) FROM entities")[0][0] == 0
        status = engine.status()["counts"]
        assert status["derived_actions"] == 2 and status["client_actions"] == 5
        session = engine.get_session("cx-old")
        assert session["reconciliation_status"] == "pending"
    finally:
        engine.close()

    setup = subprocess.run(
        [sys.executable, "-m", "sessions_graph", "--db", str(path), "setup"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert setup.returncode == 0, setup.stderr
    assert "2 derived actions" in setup.stdout and "5 client-context actions" in setup.stdout
