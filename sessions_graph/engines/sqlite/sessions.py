"""Sessions and their actions: starting and ending sessions, recording
actions (and indexing them for recall, ``Recall._index_turns``), the
reconciliation queue's entry points, reading sessions and actions back, and
the transcript import cursors. The transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence

from sessions_graph.clock import utcnow
from sessions_graph.engines.base import (
    FAILED,
    PENDING,
    RUNNING,
    ActionsAdded,
    ImportCursor,
    Record,
    action_key,
    not_found_for_user,
    project_scope,
)
from sessions_graph.engines.sqlite.rows import (
    _ACTION_COLUMNS,
    _SESSION_COLUMNS,
    _TOUCH_SESSION,
    _action_record,
    _ensure_session,
    _session_record,
)
from sessions_graph.errors import MemoryValidationError
from sessions_graph.provenance import conversation_text, mark


class Sessions:
    """The Session and Action operations of ``SQLiteEngine``."""

    def start_session(
        self,
        session_id: str,
        user_id: str,
        started_at: str,
        cwd: str | None,
        project_key: str | None,
    ) -> None:
        with self._write() as conn:
            _ensure_session(conn, session_id, user_id, started_at)
            conn.execute(
                "UPDATE sessions SET cwd = coalesce(cwd, ?),"
                " project_key = coalesce(project_key, ?),"
                " started_at = min(coalesce(started_at, ?), ?)"  # timestamps sort as text
                " WHERE session_id = ?",
                (cwd, project_key, started_at, started_at, session_id),
            )

    def add_actions(self, session_id: str, user_id: str, actions: Sequence[Record]) -> ActionsAdded:
        with self._write() as conn:
            row = conn.execute(
                "SELECT action_count, user_id FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:  # never started: the first action dates the session
                started = (actions[0].get("timestamp") if actions else None) or utcnow()
                _ensure_session(conn, session_id, user_id, started)
            elif row[1] != user_id:
                raise MemoryValidationError(not_found_for_user(session_id, user_id))
            # The user's other sessions' ids are skipped (ON CONFLICT below);
            # count them. Keys, not ids: another user's never collide.
            keys = json.dumps(list({action_key(user_id, a["action_id"]) for a in actions}))
            foreign = conn.execute(
                "SELECT count(*) FROM actions WHERE action_key IN (SELECT value FROM json_each(?))"
                " AND session_id != ?",
                (keys, session_id),
            ).fetchone()[0]
            seq = row[0] if row else 0
            actions = [dict(a) for a in actions]
            mark(actions, _derived_calls(conn, session_id, actions))
            added = 0
            for action in actions:
                cursor = conn.execute(
                    f"INSERT INTO actions(action_key, {_ACTION_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT(action_key) DO NOTHING",
                    (
                        action_key(user_id, action["action_id"]),
                        action["action_id"],
                        session_id,
                        seq + added,
                        action["action_type"],
                        action["text"],
                        action.get("timestamp"),
                        action.get("tool_name"),
                        action.get("tool_use_id"),
                        int(bool(action.get("is_error"))),
                        int(action.get("redactions") or 0),
                        action["origin"],
                    ),
                )
                added += cursor.rowcount
            if added:
                conn.execute(
                    "UPDATE sessions SET action_count = action_count + ? WHERE session_id = ?",
                    (added, session_id),
                )
                conn.execute(_TOUCH_SESSION, (session_id,))
                self._index_turns(conn, session_id, user_id, seq)
            return ActionsAdded(added, foreign)

    def _queue(self, session_id: str, ended_at: str | None) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE sessions SET content_version = content_version + 1,"
                " ended_at = coalesce(?, ended_at),"
                " reconciliation_status = CASE WHEN reconciliation_status = ?"
                "   THEN reconciliation_status ELSE ? END"
                " WHERE session_id = ?",
                (ended_at, RUNNING, PENDING, session_id),
            )
            return cursor.rowcount > 0

    def end_session(self, session_id: str, ended_at: str) -> bool:
        return self._queue(session_id, ended_at)

    def mark_pending(self, session_id: str) -> bool:
        return self._queue(session_id, None)

    def pending_sessions(self, limit: int, include_failed: bool = False) -> list[Record]:
        rows = self._read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions"
            " WHERE reconciliation_status = ? OR (? AND reconciliation_status = ?)"
            "   OR (reconciliation_status = ? AND claim_expires_at < ?)"
            " ORDER BY coalesce(ended_at, started_at), session_id LIMIT ?",
            (PENDING, include_failed, FAILED, RUNNING, time.time(), limit),
        )
        return [_session_record(r) for r in rows]

    def get_session(self, session_id: str) -> Record | None:
        rows = self._read(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,)
        )
        return _session_record(rows[0]) if rows else None

    def get_actions(self, session_id: str) -> list[Record]:
        rows = self._read(
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        return [_action_record(r) for r in rows]

    def recent_sessions(
        self,
        user_id: str,
        project_key: str | None,
        limit: int,
        before: str | None,
        preview_chars: int,
    ) -> list[Record]:
        # Each preview is a correlated look-up on the (session_id, seq) index:
        # only the page's sessions are read, never their whole action lists.
        # Conversation only: "where you left off" never quotes our own
        # Injected Context or the client's boilerplate back.
        message = (
            "(SELECT {col} FROM actions a WHERE a.session_id = s.session_id"
            " AND a.action_type = '{kind}' AND a.origin = 'conversation'"
            " ORDER BY a.seq {order} LIMIT 1)"
        )
        first = message.format(col="{col}", kind="user_message", order="ASC")
        last = message.format(col="{col}", kind="assistant_message", order="DESC")
        project, project_dir = project_scope(project_key)
        rows = self._read(
            "SELECT s.session_id, s.user_id, s.started_at, s.ended_at, s.cwd, s.project_key,"
            " s.action_count,"
            f" {first.format(col='substr(a.text, 1, :chars)')} AS first_user_message,"
            f" {first.format(col='a.timestamp')} AS first_user_message_at,"
            f" {first.format(col='a.action_id')} AS first_user_message_id,"
            f" {last.format(col='substr(a.text, 1, :chars)')} AS last_assistant_message,"
            f" {last.format(col='a.timestamp')} AS last_assistant_message_at,"
            f" {last.format(col='a.action_id')} AS last_assistant_message_id"
            " FROM sessions s WHERE s.user_id = :user"
            " AND (:project IS NULL OR s.project_key = :project OR s.cwd = :project"
            "      OR substr(s.cwd, 1, length(:project_dir)) = :project_dir)"
            " AND (:before IS NULL OR s.started_at < :before)"
            " ORDER BY s.started_at DESC, s.session_id DESC LIMIT :limit",
            {
                "chars": preview_chars,
                "user": user_id,
                "project": project,
                "project_dir": project_dir,
                "before": before,
                "limit": limit,
            },
        )
        return [_conversation_previews(dict(r)) for r in rows]

    def adopt_legacy_project(
        self, user_id: str, legacy_key: str, root: str, project_key: str
    ) -> int:
        with self._write() as conn:
            moved = conn.execute(
                "UPDATE sessions SET project_key = :key"
                " WHERE user_id = :user AND project_key = :legacy"
                " AND (cwd = :root OR substr(cwd, 1, length(:root) + 1) = :root || '/')",
                {"key": project_key, "user": user_id, "legacy": legacy_key, "root": root},
            ).rowcount
            conn.execute(
                "UPDATE memories SET project_key = :key"
                " WHERE user_id = :user AND project_key = :legacy AND session_id IN ("
                "   SELECT session_id FROM sessions WHERE user_id = :user AND project_key = :key)",
                {"key": project_key, "user": user_id, "legacy": legacy_key},
            )
            return moved

    def get_import_cursor(self, session_id: str) -> ImportCursor | None:
        rows = self._read(
            "SELECT import_source, import_offset, import_fingerprint FROM sessions"
            " WHERE session_id = ? AND import_source IS NOT NULL",
            (session_id,),
        )
        return ImportCursor(*rows[0]) if rows else None

    def set_import_cursor(
        self, session_id: str, source: str, offset: int, fingerprint: str | None = None
    ) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET import_source = ?, import_offset = ?, import_fingerprint = ?"
                " WHERE session_id = ?",
                (source, offset, fingerprint, session_id),
            )

    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        rows = self._read(
            # seq numbers are consecutive from 0: a page is a range of them.
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE session_id = ?"
            " AND seq >= ? AND seq < ? ORDER BY seq",
            (session_id, offset, offset + limit),
        )
        return [_action_record(r) for r in rows]


def _derived_calls(conn: sqlite3.Connection, session_id: str, actions: list[Record]) -> set[str]:
    """The tool_use_ids of the session's stored derived calls that the
    batch's tool results answer: a result is derived when its call is, and
    the call may have come in an earlier batch."""
    wanted = [a["tool_use_id"] for a in actions if a["action_type"] == "tool_result"]
    wanted = [w for w in wanted if w]
    if not wanted:
        return set()
    rows = conn.execute(
        "SELECT tool_use_id FROM actions WHERE session_id = ? AND action_type = 'tool_call'"
        " AND origin = 'derived' AND tool_use_id IN (SELECT value FROM json_each(?))",
        (session_id, json.dumps(wanted)),
    ).fetchall()
    return {r[0] for r in rows}


def _conversation_previews(row: Record) -> Record:
    """A recent session's previews with any element cut out (a prompt that
    carried a ``<system-reminder>``); the previews' actions are conversation."""
    for key, kind in (
        ("first_user_message", "user_message"),
        ("last_assistant_message", "assistant_message"),
    ):
        if row.get(key):
            row[key] = conversation_text(row[key], kind)
    return row
