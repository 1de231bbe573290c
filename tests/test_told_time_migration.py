"""The embedded migration that gives turns indexed before it their Told Time
(``schema.MIGRATIONS[20]``): computed from each action's text and the time
it was said (its own, else its session's start)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import schema

QUESTION = "Where did I go with my colleagues in March 2023?"


def test_a_store_from_before_gets_its_told_time(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SessionsGraph(db=str(path)) as graph:
        graph.record_session_start(
            "s-1", user_id="alice", started_at=datetime(2023, 4, 18, tzinfo=timezone.utc)
        )
        graph.record_actions(
            "s-1",
            [
                # No time of its own: the session's start is when it was said.
                {
                    "action_id": "a-1",
                    "action_type": "user_message",
                    "text": "My colleagues and I went to a convention last month",
                },
                {
                    "action_id": "a-2",
                    "action_type": "assistant_message",
                    "text": "Nice! My colleagues went yesterday",
                    "timestamp": "2023-05-10T08:00:00Z",
                },
                {"action_id": "a-3", "action_type": "user_message", "text": "no time told here"},
            ],
        )
        before = graph.recall("alice", QUESTION).hits
    # The file as the build before wrote it: no Told Time.
    conn = sqlite3.connect(path, isolation_level=None)
    told = dict(conn.execute("SELECT action_id, told_since FROM turn_docs").fetchall())
    conn.execute("ALTER TABLE turn_docs DROP COLUMN told_since")
    conn.execute("ALTER TABLE turn_docs DROP COLUMN told_until")
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION - 1}")
    conn.close()

    with SessionsGraph(db=str(path)) as graph:  # migrates
        assert graph.status()["schema_version"] == schema.SCHEMA_VERSION
        migrated = graph.recall("alice", QUESTION).hits
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT action_id, told_since, told_until FROM turn_docs ORDER BY action_id"
    ).fetchall()
    conn.close()
    assert rows == [
        ("a-1", "2023-03-01T00:00:00.000000+00:00", "2023-04-01T00:00:00.000000+00:00"),
        ("a-2", "2023-05-09T00:00:00.000000+00:00", "2023-05-10T00:00:00.000000+00:00"),
        ("a-3", None, None),
    ]
    # The same as a store indexed with Told Time from the start.
    assert told == {action: since for action, since, _ in rows}
    assert [h.action_id for h in migrated] == [h.action_id for h in before]
    assert "dates" in migrated[0].lanes and migrated[0].action_id == "a-1"
