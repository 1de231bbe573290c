"""What more than one concern module shares: the column lists, the SQL that
touches a session, row to record conversions, and the MERGEs of a User, a
Session and a Memory, as functions of the open transaction's connection."""

from __future__ import annotations

import json
import sqlite3

from sessions_graph.engines.base import (
    FAILED,
    PENDING,
    RECONCILED,
    Record,
    memory_id_taken,
    not_found_for_user,
)
from sessions_graph.errors import MemoryIdTakenError, MemoryValidationError

_MEMORY_COLUMNS = "memory_id, user_id, content, session_id, created_at, updated_at, project_key"
_SESSION_COLUMNS = (
    "session_id, user_id, started_at, ended_at, cwd, project_key, reconciliation_status,"
    " reconciled_at, reconciliation_error, last_summary, content_version, action_count"
)
_ACTION_COLUMNS = (
    "action_id, session_id, seq, action_type, text, timestamp, tool_name, tool_use_id, is_error,"
    " redactions, origin"
)
# A write that changes a session's content: bump its version and send a
# finished reconciliation back to the queue (a running one is sent back by
# finish_reconciliation, which compares versions).
_TOUCH_SESSION = f"""
    UPDATE sessions SET content_version = content_version + 1,
        reconciliation_status = CASE WHEN reconciliation_status IN ('{RECONCILED}', '{FAILED}')
                                     THEN '{PENDING}' ELSE reconciliation_status END
    WHERE session_id = ?
"""


def _session_record(row: sqlite3.Row) -> Record:
    record = dict(row)
    if record.get("last_summary"):
        record["last_summary"] = json.loads(record["last_summary"])
    return record


def _action_record(row: sqlite3.Row) -> Record:
    record = dict(row)
    record["is_error"] = bool(record["is_error"])
    return record


def _ensure_user(conn: sqlite3.Connection, user_id: str, now: str) -> None:
    conn.execute(
        "INSERT INTO users(user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (user_id, now),
    )


def _ensure_session(conn: sqlite3.Connection, session_id: str, user_id: str, now: str) -> None:
    """MERGE a session for ``user_id``; refuse one that belongs to another user."""
    _ensure_user(conn, user_id, now)
    conn.execute(
        "INSERT INTO sessions(session_id, user_id, started_at) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (session_id, user_id, now),
    )
    owner = conn.execute(
        "SELECT user_id FROM sessions WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    if owner != user_id:
        raise MemoryValidationError(not_found_for_user(session_id, user_id))


def _insert_memory(conn: sqlite3.Connection, memory: Record) -> None:
    """INSERT a Memory, MERGE its User and Session, touch the Session. A
    memory given no ``project_key`` takes its session's. A ``memory_id`` in
    use (a caller may choose it) raises ``MemoryIdTakenError``, checked in
    the caller's write transaction before anything is written."""
    if conn.execute(
        "SELECT 1 FROM memories WHERE memory_id = ?", (memory["memory_id"],)
    ).fetchone():
        raise MemoryIdTakenError(memory_id_taken(memory["memory_id"]))
    _ensure_user(conn, memory["user_id"], memory["created_at"])
    project = memory.get("project_key")
    if memory["session_id"]:
        _ensure_session(conn, memory["session_id"], memory["user_id"], memory["created_at"])
        conn.execute(_TOUCH_SESSION, (memory["session_id"],))
        if project is None:
            project = conn.execute(
                "SELECT project_key FROM sessions WHERE session_id = ?", (memory["session_id"],)
            ).fetchone()[0]
    conn.execute(
        f"INSERT INTO memories({_MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (*(memory[k] for k in _MEMORY_COLUMNS.split(", ")[:-1]), project),
    )
