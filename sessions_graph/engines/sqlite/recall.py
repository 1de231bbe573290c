"""Recall's storage: the turn index (one full-text document per action,
written with the actions), searching it, the turns around a hit, and the
entities a question names. The transactions come from engine.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from sessions_graph.engines.base import Record, action_key, project_scope
from sessions_graph.engines.sqlite.rows import _ACTION_COLUMNS, _action_record
from sessions_graph.index_text.records import group_entity_units
from sessions_graph.index_text.turns import TURN_RADIUS, turn_documents
from sessions_graph.provenance import conversation_rows

#: A recall term found in more turn documents than this is a common term
#: (``Recall._turn_matches``), left out of the search when others remain.
COMMON_TURN_DOCS = 1000
#: When even the least common terms select more documents than that, only
#: the newest this many of them are ranked: a question of only very common
#: words trades older matches for a bounded time.
RANKED_TURN_DOCS = 5000

# The recall filters (``Engine.search_turns``) over turn_docs d and sessions s.
_TURN_FILTERS = """
    AND (:exclude IS NULL OR d.session_id != :exclude)
    AND (:only IS NULL OR d.session_id = :only)
    AND (:since IS NULL OR coalesce(d.timestamp, s.started_at) >= :since)
    AND (:until IS NULL OR coalesce(d.timestamp, s.started_at) <= :until)
    AND (:told_since IS NULL OR (d.told_since < :told_until AND d.told_until > :told_since))
    AND (:project IS NULL OR s.project_key = :project OR s.cwd = :project
         OR substr(s.cwd, 1, length(:project_dir)) = :project_dir)
"""


class Recall:
    """The recall operations of ``SQLiteEngine``."""

    def _index_turns(
        self, conn: sqlite3.Connection, session_id: str, user_id: str, first_seq: int
    ) -> None:
        """Index the session's actions from ``first_seq`` on and rewrite the
        context of the ones just before them: a batch costs one document per
        new action plus at most ``TURN_RADIUS`` rewritten."""
        # Conversation only (``provenance``): derived and client actions are
        # neither documents nor their neighbours' context, so the read starts
        # at the 2 * TURN_RADIUS-th conversation action before first_seq.
        rows = conversation_rows(
            conn.execute(
                "SELECT a.action_key, a.action_id, a.seq, a.action_type, a.text, a.timestamp,"
                " coalesce(a.timestamp, s.started_at) AS said_at, a.origin, d.rowid AS doc"
                " FROM actions a JOIN sessions s ON s.session_id = a.session_id"
                " LEFT JOIN turn_docs d ON d.action_key = a.action_key"
                " WHERE a.session_id = ? AND a.seq >= coalesce("
                "   (SELECT min(seq) FROM (SELECT seq FROM actions"
                "     WHERE session_id = ? AND seq < ? AND origin = 'conversation'"
                "     ORDER BY seq DESC LIMIT ?)), ?)"
                " ORDER BY a.seq",
                (session_id, session_id, first_seq, 2 * TURN_RADIUS, first_seq),
            ).fetchall()
        )
        by_id = {r["action_id"]: r for r in rows}
        for document in turn_documents(rows, first_seq):
            row = by_id[document["action_id"]]
            if row["doc"] is not None:
                conn.execute(
                    "UPDATE turns_fts SET context = ? WHERE rowid = ?",
                    (document["context"], row["doc"]),
                )
                continue
            cursor = conn.execute(
                "INSERT INTO turn_docs(action_key, action_id, user_id, session_id, action_type,"
                " timestamp, speaker, asks, only_asks, tells_time, told_since, told_until)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row["action_key"],
                    row["action_id"],
                    user_id,
                    session_id,
                    row["action_type"],
                    row["timestamp"],
                    document["speaker"],
                    document["asks"],
                    document["only_asks"],
                    document["tells_time"],
                    document["told_since"],
                    document["told_until"],
                ),
            )
            conn.execute(
                "INSERT INTO turns_fts(rowid, body, context) VALUES (?, ?, ?)",
                (cursor.lastrowid, document["body"], document["context"]),
            )

    def _index_unindexed_turns(self, conn: sqlite3.Connection) -> None:
        sessions = conn.execute(
            "SELECT DISTINCT a.session_id, s.user_id FROM actions a"
            " JOIN sessions s ON s.session_id = a.session_id"
            " WHERE a.origin = 'conversation'"
            " AND NOT EXISTS (SELECT 1 FROM turn_docs d WHERE d.action_key = a.action_key)"
        ).fetchall()
        for session_id, user_id in sessions:
            self._index_turns(conn, session_id, user_id, 0)

    def search_turns(
        self, user_id: str, terms: Sequence[Sequence[str]], limit: int, filters: Record
    ) -> list[Record]:
        # Choosing the match and ranking it ask for the same counts (a
        # phrase alone, then AND-ed with the next): each is counted once.
        counts: dict[str, int] = {}

        def count(match: str) -> int:
            if match not in counts:
                counts[match] = self._count_turns(match, COMMON_TURN_DOCS)
            return counts[match]

        matches = self._turn_matches(terms, count)
        if not matches:
            return []
        narrow, wide = matches
        rows = self._rank_turns(narrow, user_id, limit, filters, count(narrow))
        if not rows and wide != narrow:
            # Which words are common is counted over every user's documents:
            # for this user, the words left out may be all that matches.
            rows = self._rank_turns(wide, user_id, limit, filters, count(wide))
        return rows

    def _rank_turns(
        self, match: str, user_id: str, limit: int, filters: Record, matched: int
    ) -> list[Record]:
        # Too many rows (``matched``, as ``_count_turns`` counts them) to
        # rank fast: rank the user's newest RANKED_TURN_DOCS of them, which
        # FTS5 reads from a rowid bound without touching older ones. Unless
        # the store holds no more than that many (every user's, counted
        # without reading turn_docs): then the bound is the user's oldest
        # match, which the user condition below leaves out nothing under.
        first = 0
        if matched > COMMON_TURN_DOCS and self._count_turns(match, RANKED_TURN_DOCS) > (
            RANKED_TURN_DOCS
        ):
            first = self._read(
                "SELECT coalesce(min(rowid), 0) FROM (SELECT turns_fts.rowid FROM turns_fts"
                " JOIN turn_docs d ON d.rowid = turns_fts.rowid"
                " WHERE turns_fts MATCH ? AND d.user_id = ? ORDER BY turns_fts.rowid DESC LIMIT ?)",
                (match, user_id, RANKED_TURN_DOCS),
            )[0][0]
        rows = self._read(
            "SELECT d.action_id, d.session_id, d.action_type, d.speaker, d.asks, d.only_asks,"
            " d.tells_time,"
            " coalesce(d.timestamp, s.started_at) AS timestamp, -turns_fts.rank AS score"
            " FROM turns_fts JOIN turn_docs d ON d.rowid = turns_fts.rowid"
            " JOIN sessions s ON s.session_id = d.session_id"
            " WHERE turns_fts MATCH :match AND turns_fts.rowid >= :first"
            " AND d.user_id = :user_id"
            f"{_TURN_FILTERS} ORDER BY turns_fts.rank LIMIT :limit",
            {
                "match": match,
                "first": first,
                "user_id": user_id,
                "limit": limit,
                **_turn_filter_params(filters),
            },
        )
        return [
            {
                **r,
                "asks": bool(r["asks"]),
                "only_asks": bool(r["only_asks"]),
                "tells_time": bool(r["tells_time"]),
            }
            for r in map(dict, rows)
        ]

    def _turn_matches(
        self, terms: Sequence[Sequence[str]], count: Callable[[str], int]
    ) -> tuple[str, str] | None:
        """The MATCH expressions for recall's terms: the narrow one, leaving
        out common terms, and the wide one, every term in the index OR-ed.

        Ranking with bm25 costs, besides every matched row, one pass over
        the whole document list of each phrase of the query (its document
        frequency), and with its neighbours' text a word such as "error" or
        "test" is in most turn documents. So a term found in more than
        ``COMMON_TURN_DOCS`` documents is left out of the narrow match: it
        would cost the most and weigh the least. With nothing but common
        terms, the least common ones are AND-ed until they select few enough
        rows (or no further term narrows them). None when no term is in the
        index at all. ``count``: ``_count_turns`` up to ``COMMON_TURN_DOCS``
        (a memo of it)."""
        # Tokens are letters and digits only, so quoting each phrase is safe.
        counted = sorted(
            (n, phrase)
            for phrase in dict.fromkeys('"' + " ".join(t) + '"' for t in terms)
            if (n := count(phrase))
        )
        if not counted:
            return None
        wide = " OR ".join(p for _, p in counted)
        rare = [p for n, p in counted if n <= COMMON_TURN_DOCS]
        if rare:
            return " OR ".join(rare), wide
        chosen = [counted[0][1]]
        for _, phrase in counted[1:]:
            if count(" AND ".join(chosen)) <= COMMON_TURN_DOCS:
                break
            if count(" AND ".join([*chosen, phrase])):
                chosen.append(phrase)  # else: together they select nothing
        return " AND ".join(chosen), wide

    def _count_turns(self, match: str, most: int) -> int:
        """How many turn documents ``match`` selects, counted up to one more
        than ``most`` (all a caller needs to know, and cheap)."""
        return self._read(
            "SELECT count(*) FROM (SELECT 1 FROM turns_fts WHERE turns_fts MATCH ? LIMIT ?)",
            (match, most + 1),
        )[0][0]

    def turn_windows(self, user_id: str, action_ids: Sequence[str], radius: int) -> list[Record]:
        if not action_ids:
            return []
        rows = self._read(
            "SELECT h.action_id AS hit_id,"
            f" {', '.join('a.' + c for c in _ACTION_COLUMNS.split(', '))}"
            " FROM actions h JOIN sessions s ON s.session_id = h.session_id AND s.user_id = ?"
            " JOIN actions a ON a.session_id = h.session_id"
            "   AND a.seq BETWEEN h.seq - ? AND h.seq + ? AND a.origin = 'conversation'"
            " WHERE h.action_key IN (SELECT value FROM json_each(?))",
            (user_id, radius, radius, json.dumps([action_key(user_id, a) for a in action_ids])),
        )
        return [_action_record(r) for r in rows]

    def recall_entities(self, user_id: str, name_keys: Sequence[str], limit: int) -> list[Record]:
        if not name_keys:
            return []
        entities = self._read(
            "SELECT entity_id FROM entities WHERE name_key IN (SELECT value FROM json_each(?))"
            " ORDER BY name, entity_id",
            (json.dumps(list(name_keys)),),
        )
        rows: list[Record] = []
        for (entity_id,) in entities:
            # One entity at a time, in the mentions' key order (entity, chunk),
            # so that LIMIT stops the scan after the user's first ``limit``.
            rows += map(
                dict,
                self._read(
                    "SELECT e.name, m.entity_type, m.description, uc.unit_kind,"
                    " coalesce(a.action_id, uc.unit_id) AS unit_id,"
                    " coalesce(a.session_id, mm.session_id) AS session_id,"
                    " CASE WHEN uc.unit_kind = 'action' THEN coalesce(a.timestamp, s.started_at)"
                    "      ELSE mm.created_at END AS timestamp, s.project_key, s.cwd"
                    " FROM entities e JOIN mentions m ON m.entity_id = e.entity_id"
                    " JOIN unit_chunks uc ON uc.chunk_hash = m.chunk_hash"
                    " LEFT JOIN actions a ON uc.unit_kind = 'action' AND a.action_key = uc.unit_id"
                    " LEFT JOIN memories mm ON uc.unit_kind = 'memory'"
                    "   AND mm.memory_id = uc.unit_id"
                    " LEFT JOIN sessions s ON s.session_id = coalesce(a.session_id, mm.session_id)"
                    " WHERE e.entity_id = ?"
                    "   AND (a.action_key IS NULL OR a.origin = 'conversation')"
                    "   AND (s.user_id = ? OR (s.session_id IS NULL AND mm.user_id = ?))"
                    " ORDER BY m.chunk_hash LIMIT ?",
                    (entity_id, user_id, user_id, limit),
                ),
            )
        return group_entity_units(rows)


def _turn_filter_params(filters: Record) -> dict[str, Any]:
    project, project_dir = project_scope(filters.get("project"))
    return {
        "exclude": filters.get("exclude_session"),
        "only": filters.get("only_session"),
        "since": filters.get("since"),
        "until": filters.get("until"),
        "told_since": told[0] if (told := filters.get("told")) else None,
        "told_until": told[1] if told else None,
        "project": project,
        "project_dir": project_dir,
    }
