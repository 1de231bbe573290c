"""Sessions and their actions on the Memgraph engine: starting and ending a
session, adding actions (numbered and chained), the reconciliation queue
(``mark_pending``, ``pending_sessions``), reading sessions and actions, and
import cursors. The mixin reaches the plumbing (``_read``, ``_write``) and the
turn index (``_index_turns``, ``recall.py``) through ``self``; the plumbing
comes from ``engine.py``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sessions_graph.clock import utcnow
from sessions_graph.engines.base import (
    ActionsAdded,
    ImportCursor,
    Record,
    not_found_for_user,
    project_scope,
)
from sessions_graph.engines.memgraph.rows import _STATUS_PARAMS, _count, _rows, _session_record
from sessions_graph.errors import MemoryValidationError


class Sessions:
    """Sessions, actions, the reconciliation queue and import cursors."""

    def _ensure_session(self, tx: Any, session_id: str, user_id: str, now: str) -> None:
        """MERGE the session for ``user_id``; refuse one owned by another user."""
        owner = _rows(tx, "session/ensure", session_id=session_id, user_id=user_id, now=now)
        if owner[0]["owner"] != user_id:
            raise MemoryValidationError(not_found_for_user(session_id, user_id))
        _rows(tx, "session/link_user", session_id=session_id, user_id=user_id)

    def _touch(self, tx: Any, session_id: str, added_actions: int = 0) -> None:
        _rows(
            tx,
            "session/touch",
            session_id=session_id,
            added_actions=added_actions,
            **_STATUS_PARAMS,
        )

    def start_session(
        self,
        session_id: str,
        user_id: str,
        started_at: str,
        cwd: str | None,
        project_key: str | None,
    ) -> None:
        def work(tx: Any) -> None:
            self._ensure_session(tx, session_id, user_id, started_at)
            _rows(
                tx,
                "session/fill_start",
                session_id=session_id,
                cwd=cwd,
                project_key=project_key,
                started_at=started_at,
            )

        self._write(work)

    def add_actions(self, session_id: str, user_id: str, actions: Sequence[Record]) -> ActionsAdded:
        def work(tx: Any) -> ActionsAdded:
            # Only an unknown session is created (dated by its first action); a
            # known one must be ``user_id``'s.
            state = _rows(tx, "session/action_state", session_id=session_id)
            if not state:
                now = (actions[0].get("timestamp") if actions else None) or utcnow()
                self._ensure_session(tx, session_id, user_id, now)
            elif state[0]["owner"] != user_id:
                raise MemoryValidationError(not_found_for_user(session_id, user_id))
            new, foreign = self._new_actions(tx, session_id, actions)
            if not new:
                return ActionsAdded(0, foreign)
            known = state[0] if state else {"action_count": 0, "last_action_id": None}
            rows, links = _number_actions(new, known["action_count"] or 0, known["last_action_id"])
            _rows(tx, "action/create", session_id=session_id, actions=rows)
            _rows(tx, "action/chain", links=links)
            self._touch(tx, session_id, added_actions=len(rows))
            self._index_turns(tx, session_id, user_id, rows[0]["seq"])
            return ActionsAdded(len(rows), foreign)

        return self._write(work)

    @staticmethod
    def _new_actions(
        tx: Any, session_id: str, actions: Sequence[Record]
    ) -> tuple[list[Record], int]:
        """The actions not stored yet, each id once, in the order given, and how
        many distinct ids another session holds (skipped: an action stays with
        the session that recorded it first)."""
        ids = [a["action_id"] for a in actions]
        rows = _rows(tx, "action/existing", action_ids=ids)
        stored = {r["action_id"] for r in rows}
        foreign = len({r["action_id"] for r in rows if r["session_id"] != session_id})
        new: dict[str, Record] = {}
        for action in actions:
            if action["action_id"] not in stored:
                new.setdefault(action["action_id"], action)
        return list(new.values()), foreign

    def _queue(self, session_id: str, ended_at: str | None) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx, "session/queue", session_id=session_id, ended_at=ended_at, **_STATUS_PARAMS
            )
        )
        return _count(rows, "found") > 0

    def end_session(self, session_id: str, ended_at: str) -> bool:
        return self._queue(session_id, ended_at)

    def mark_pending(self, session_id: str) -> bool:
        return self._queue(session_id, None)

    def pending_sessions(self, limit: int, include_failed: bool = False) -> list[Record]:
        rows = self._read(
            "session/pending",
            limit=limit,
            include_failed=include_failed,
            now=time.time(),
            **_STATUS_PARAMS,
        )
        return [_session_record(r) for r in rows]

    def get_session(self, session_id: str) -> Record | None:
        rows = self._read("session/get", session_id=session_id)
        return _session_record(rows[0]) if rows else None

    def get_actions(self, session_id: str) -> list[Record]:
        rows = self._read("action/list", session_id=session_id)
        for row in rows:
            row["is_error"] = bool(row["is_error"])
            row["redactions"] = row["redactions"] or 0  # actions recorded before the count
        return rows

    def recent_sessions(
        self,
        user_id: str,
        project_key: str | None,
        limit: int,
        before: str | None,
        preview_chars: int,
    ) -> list[Record]:
        project, project_dir = project_scope(project_key)
        rows = self._read(
            "session/recent",
            user_id=user_id,
            project_key=project,
            project_dir=project_dir,
            limit=limit,
            before=before,
            preview_chars=preview_chars,
        )
        for row in rows:
            row["action_count"] = row.get("action_count") or 0
        return rows

    def get_import_cursor(self, session_id: str) -> ImportCursor | None:
        rows = self._read("session/get_cursor", session_id=session_id)
        if not rows:
            return None
        row = rows[0]
        return ImportCursor(row["import_source"], row["import_offset"] or 0, row["fingerprint"])

    def set_import_cursor(
        self, session_id: str, source: str, offset: int, fingerprint: str | None = None
    ) -> None:
        self._write(
            lambda tx: _rows(
                tx,
                "session/set_cursor",
                session_id=session_id,
                source=source,
                import_offset=offset,
                fingerprint=fingerprint,
            )
        )

    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        rows = self._read("action/page", session_id=session_id, start=offset, stop=offset + limit)
        for row in rows:
            row["is_error"] = bool(row["is_error"])
        return rows


def _number_actions(
    actions: Sequence[Record], first_seq: int, previous: str | None
) -> tuple[list[Record], list[Record]]:
    """Give new actions consecutive ``seq`` numbers and FOLLOWED_BY links."""
    rows, links = [], []
    for offset, action in enumerate(actions):
        rows.append(
            {
                "action_id": action["action_id"],
                "seq": first_seq + offset,
                "action_type": action["action_type"],
                "text": action.get("text") or "",
                "timestamp": action.get("timestamp"),
                "tool_name": action.get("tool_name"),
                "tool_use_id": action.get("tool_use_id"),
                "is_error": bool(action.get("is_error", False)),
                "redactions": int(action.get("redactions") or 0),
            }
        )
        if previous is not None:
            links.append({"previous": previous, "next": action["action_id"]})
        previous = action["action_id"]
    return rows, links
