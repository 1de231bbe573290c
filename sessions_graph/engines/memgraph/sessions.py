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
    action_key,
    not_found_for_user,
    project_scope,
)
from sessions_graph.engines.memgraph.rows import _STATUS_PARAMS, _count, _rows, _session_record
from sessions_graph.errors import MemoryValidationError
from sessions_graph.provenance import CONVERSATION, conversation_text, mark, origin

#: Actions classified per transaction when ``setup`` marks older ones.
ORIGIN_BATCH = 500
#: Actions keyed per transaction when ``setup`` keys older ones.
KEY_BATCH = 5000


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
            new, foreign = self._new_actions(tx, session_id, user_id, actions)
            if not new:
                return ActionsAdded(0, foreign)
            mark(new, _derived_calls(tx, session_id, new))
            known = state[0] if state else {"action_count": 0, "last_action_key": None}
            rows, links = _number_actions(
                new, user_id, known["action_count"] or 0, known["last_action_key"]
            )
            _rows(tx, "action/create", session_id=session_id, actions=rows)
            _rows(tx, "action/chain", links=links)
            self._touch(tx, session_id, added_actions=len(rows))
            self._index_turns(tx, session_id, user_id, rows[0]["seq"])
            return ActionsAdded(len(rows), foreign)

        return self._write(work)

    @staticmethod
    def _new_actions(
        tx: Any, session_id: str, user_id: str, actions: Sequence[Record]
    ) -> tuple[list[Record], int]:
        """The actions ``user_id`` has not stored yet, each id once, in the
        order given, and how many distinct ids another of the user's sessions
        holds (skipped: an action stays with the session that recorded it
        first). Looked up by key: another user's ids never count."""
        keys = sorted({action_key(user_id, a["action_id"]) for a in actions})
        rows = _rows(tx, "action/existing", action_keys=keys)
        stored = {r["action_id"] for r in rows}
        foreign = len({r["action_id"] for r in rows if r["session_id"] != session_id})
        new: dict[str, Record] = {}
        for action in actions:
            if action["action_id"] not in stored:
                new.setdefault(action["action_id"], dict(action))
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
            # A prompt that carried a <system-reminder>: the element is cut.
            for key, kind in (
                ("first_user_message", "user_message"),
                ("last_assistant_message", "assistant_message"),
            ):
                if row.get(key):
                    row[key] = conversation_text(row[key], kind)
        return rows

    def adopt_legacy_project(
        self, user_id: str, legacy_key: str, root: str, project_key: str
    ) -> int:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "session/adopt_legacy",
                user_id=user_id,
                legacy_key=legacy_key,
                root=root,
                project_key=project_key,
            )
        )
        return _count(rows, "moved")

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

    def _key_actions(self) -> None:
        """Give the actions stored before action ids were keyed per user
        theirs (schema version 12, run by ``setup`` before anything that
        looks actions up by key), a batch per transaction until none is left."""
        while _count(
            self._write(lambda tx: _rows(tx, "schema/set_action_keys", limit=KEY_BATCH)), "keyed"
        ):
            pass

    def _mark_origins(self) -> None:
        """Give the actions stored before origins were kept theirs (schema
        version 6, run by ``setup``): classified a batch per transaction with
        ``provenance.origin``, then results of derived calls marked derived.
        Every session that held a derived or client action, or a message
        with an element cut out, loses those actions' chunks (and the
        entities only they held), gets its turn documents written again
        and goes back to reconciliation."""
        recut: set[str] = set()
        while batch := self._read("schema/unmarked_actions", limit=ORIGIN_BATCH):
            marks = []
            for row in batch:
                text = row["text"] or ""
                kind = origin(row["action_type"], text, row["tool_name"])
                marks.append({"action_key": row["action_key"], "origin": kind})
                if kind != CONVERSATION or conversation_text(text, row["action_type"]) != text:
                    recut.add(row["session_id"])
            self._write(lambda tx, m=marks: _rows(tx, "schema/set_origins", marks=m))
        results = self._write(lambda tx: _rows(tx, "schema/derived_results"))
        recut.update(r["session_id"] for r in results)
        for session_id in sorted(recut):
            self._write(lambda tx, s=session_id: self._recut_session(tx, s))

    def _recut_session(self, tx: Any, session_id: str) -> None:
        """A session's derived and client actions out of the turn index and
        of its chunks; its conversation's documents written again."""
        state = _rows(tx, "session/action_state", session_id=session_id)
        if not state:
            return
        dropped: list[str] = []
        for row in _rows(tx, "schema/unindex_context", session_id=session_id):
            dropped += [
                r["hash"]
                for r in _rows(
                    tx,
                    "reconcile/detach_action_chunks",
                    unit_id=row["action_key"],
                    content_hash=None,
                )
            ]
        self._collect_garbage(tx, dropped)
        self._index_turns(tx, session_id, state[0]["owner"], 0)
        self._touch(tx, session_id)

    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        rows = self._read("action/page", session_id=session_id, start=offset, stop=offset + limit)
        for row in rows:
            row["is_error"] = bool(row["is_error"])
        return rows


def _number_actions(
    actions: Sequence[Record], user_id: str, first_seq: int, previous: str | None
) -> tuple[list[Record], list[Record]]:
    """Give new actions their keys, consecutive ``seq`` numbers and
    FOLLOWED_BY links (from ``previous``, the last action's key)."""
    rows, links = [], []
    for offset, action in enumerate(actions):
        key = action_key(user_id, action["action_id"])
        rows.append(
            {
                "action_key": key,
                "action_id": action["action_id"],
                "seq": first_seq + offset,
                "action_type": action["action_type"],
                "text": action.get("text") or "",
                "timestamp": action.get("timestamp"),
                "tool_name": action.get("tool_name"),
                "tool_use_id": action.get("tool_use_id"),
                "is_error": bool(action.get("is_error", False)),
                "redactions": int(action.get("redactions") or 0),
                "origin": action.get("origin") or CONVERSATION,
            }
        )
        if previous is not None:
            links.append({"previous": previous, "next": key})
        previous = key
    return rows, links


def _derived_calls(tx: Any, session_id: str, actions: Sequence[Record]) -> set[str]:
    """The tool_use_ids of the session's stored derived calls that the
    batch's tool results answer (the call may have come in an earlier batch)."""
    results = [a for a in actions if a["action_type"] == "tool_result"]
    wanted = sorted({a["tool_use_id"] for a in results if a.get("tool_use_id")})
    if not wanted:
        return set()
    rows = _rows(tx, "action/derived_calls", session_id=session_id, tool_use_ids=wanted)
    return {r["tool_use_id"] for r in rows}
