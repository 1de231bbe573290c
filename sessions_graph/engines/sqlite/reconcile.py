"""Reconciliation's storage: claiming sessions, the units a session is made
of and their chunks, claiming and saving chunk extractions (entities,
mentions, relations), finishing a run, and the entity look-ups built on
them. The transactions come from engine.py."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from sessions_graph.clock import utcnow
from sessions_graph.engines.base import (
    FAILED,
    LLM_EXTRACTOR,
    PENDING,
    RECONCILED,
    RUNNING,
    Record,
)
from sessions_graph.engines.sqlite.rows import _SESSION_COLUMNS, _session_record
from sessions_graph.errors import MemoryValidationError
from sessions_graph.provenance import conversation_units
from sessions_graph.validation import check_workspace

#: The table holding each kind of reconcilable unit.
#: Each unit kind's table and the column its ``unit_id`` is: an action's
#: key (its user's and its id, ``engines.base.action_key``), a memory's id.
_UNIT_TABLES = {"action": ("actions", "action_key"), "memory": ("memories", "memory_id")}

# A session's chunks in unit order (its actions by seq, then its memories by
# creation), one row per link; parameters: session_id, session_id.
_SESSION_CHUNKS = """
    SELECT 0 AS grp, a.seq AS o1, '' AS o2, uc.position, uc.chunk_hash AS hash
    FROM actions a JOIN unit_chunks uc ON uc.unit_kind = 'action' AND uc.unit_id = a.action_key
    WHERE a.session_id = ?
    UNION ALL
    SELECT 1, 0, m.created_at || m.memory_id, uc.position, uc.chunk_hash
    FROM memories m JOIN unit_chunks uc ON uc.unit_kind = 'memory' AND uc.unit_id = m.memory_id
    WHERE m.session_id = ?
"""


class Reconcile:
    """The reconciliation operations of ``SQLiteEngine``."""

    # Session claims are a (claim_owner, claim_expires_at, claim_version)
    # triple on the session row, chunk claims rows of chunk_claims; everything
    # else is keyed by content hash, so a run killed at any point leaves
    # nothing doubled. Garbage collection of chunks and entities is done by
    # the triggers of migration 2.

    def claim_sessions(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        include_failed: bool = False,
        session_id: str | None = None,
    ) -> list[Record]:
        now = time.time()
        with self._write() as conn:
            if session_id is not None:
                ids = conn.execute(
                    "SELECT session_id FROM sessions WHERE session_id = ?"
                    " AND NOT (reconciliation_status IS ? AND claim_expires_at >= ?)",
                    (session_id, RUNNING, now),
                ).fetchall()
            else:
                ids = conn.execute(
                    "SELECT session_id FROM sessions"
                    " WHERE reconciliation_status = ? OR (? AND reconciliation_status = ?)"
                    "   OR (reconciliation_status = ? AND claim_expires_at < ?)"
                    " ORDER BY coalesce(ended_at, started_at), session_id LIMIT ?",
                    (PENDING, include_failed, FAILED, RUNNING, now, limit),
                ).fetchall()
            claimed = []
            for (sid,) in ids:
                row = conn.execute(
                    "UPDATE sessions SET reconciliation_status = ?, claim_owner = ?,"
                    " claim_expires_at = ?, claim_version = content_version"
                    f" WHERE session_id = ? RETURNING {_SESSION_COLUMNS}",
                    (RUNNING, owner, now + lease_seconds, sid),
                ).fetchone()
                claimed.append(_session_record(row))
            return claimed

    def renew_claim(self, session_id: str, owner: str, lease_seconds: float) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE sessions SET claim_expires_at = ?"
                " WHERE session_id = ? AND claim_owner = ? AND reconciliation_status = ?",
                (time.time() + lease_seconds, session_id, owner, RUNNING),
            )
            return cursor.rowcount > 0

    def reconcilable_units(self, session_id: str) -> list[Record]:
        rows = self._read(
            "SELECT 'action' AS unit_kind, a.action_key AS unit_id, a.text, a.action_type,"
            " a.origin, h.content_hash FROM actions a LEFT JOIN unit_hashes h"
            "   ON h.unit_kind = 'action' AND h.unit_id = a.action_key"
            " WHERE a.session_id = ? AND a.origin = 'conversation' ORDER BY a.seq",
            (session_id,),
        ) + self._read(
            "SELECT 'memory' AS unit_kind, m.memory_id AS unit_id, m.content AS text,"
            " h.content_hash FROM memories m LEFT JOIN unit_hashes h"
            "   ON h.unit_kind = 'memory' AND h.unit_id = m.memory_id"
            " WHERE m.session_id = ? ORDER BY m.created_at, m.memory_id",
            (session_id,),
        )
        return conversation_units(rows)

    def set_unit_chunks(
        self, unit_kind: str, unit_id: str, content_hash: str, chunks: Sequence[Record]
    ) -> None:
        unit_table = _UNIT_TABLES.get(unit_kind)
        if unit_table is None:
            raise MemoryValidationError(f"unknown unit kind {unit_kind!r}")
        hashes = [c["hash"] for c in chunks]
        with self._write() as conn:
            if not conn.execute(
                f"SELECT 1 FROM {unit_table[0]} WHERE {unit_table[1]} = ?", (unit_id,)
            ).fetchone():
                return  # deleted during the run: its links would never be collected
            conn.executemany(
                "INSERT INTO chunks(hash, text) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(c["hash"], c["text"]) for c in chunks],
            )
            # Drop only the links that go, so a chunk the unit keeps is never
            # orphaned (and collected) half way through.
            conn.execute(
                "DELETE FROM unit_chunks WHERE unit_kind = ? AND unit_id = ?"
                " AND chunk_hash NOT IN (SELECT value FROM json_each(?))",
                (unit_kind, unit_id, json.dumps(hashes)),
            )
            conn.executemany(
                "INSERT INTO unit_chunks(unit_kind, unit_id, chunk_hash, position)"
                " VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET position = excluded.position",
                [(unit_kind, unit_id, h, i) for i, h in enumerate(hashes)],
            )
            conn.execute(
                "INSERT INTO unit_hashes(unit_kind, unit_id, content_hash) VALUES (?, ?, ?)"
                " ON CONFLICT DO UPDATE SET content_hash = excluded.content_hash",
                (unit_kind, unit_id, content_hash),
            )

    def unextracted_chunks(
        self, session_id: str, workspace: str, extractors: Sequence[str] = (LLM_EXTRACTOR,)
    ) -> list[Record]:
        rows = self._read(
            f"SELECT c.hash, c.text, (SELECT json_group_array(extractor) FROM"
            "   (SELECT e.extractor FROM chunk_extractions e"
            "    WHERE e.chunk_hash = c.hash AND e.workspace = ? ORDER BY e.extractor))"
            "   AS extracted_by"
            f" FROM ({_SESSION_CHUNKS}) u JOIN chunks c ON c.hash = u.hash"
            " WHERE NOT EXISTS (SELECT 1 FROM chunk_extractions e"
            "   WHERE e.chunk_hash = c.hash AND e.workspace = ?"
            "     AND e.extractor IN (SELECT value FROM json_each(?)))"
            " ORDER BY u.grp, u.o1, u.o2, u.position",
            (workspace, session_id, session_id, workspace, json.dumps(list(extractors))),
        )
        seen: dict[str, Record] = {}
        for row in rows:
            record = dict(row)
            record["extracted_by"] = json.loads(record["extracted_by"])
            seen.setdefault(row["hash"], record)
        return list(seen.values())

    def claim_chunks(
        self,
        hashes: Sequence[str],
        workspace: str,
        owner: str,
        lease_seconds: float,
        extractors: Sequence[str] = (LLM_EXTRACTOR,),
    ) -> set[str]:
        check_workspace(workspace)
        if not hashes:
            return set()
        now = time.time()
        with self._write() as conn:
            # An upsert whose WHERE is false (another owner's live claim)
            # changes nothing and returns no row.
            rows = conn.execute(
                "INSERT INTO chunk_claims(chunk_hash, workspace, owner, expires_at)"
                " SELECT c.hash, ?, ?, ? FROM chunks c"
                " WHERE c.hash IN (SELECT value FROM json_each(?))"
                "   AND NOT EXISTS (SELECT 1 FROM chunk_extractions e"
                "     WHERE e.chunk_hash = c.hash AND e.workspace = ?"
                "       AND e.extractor IN (SELECT value FROM json_each(?)))"
                " ON CONFLICT(chunk_hash, workspace) DO UPDATE"
                " SET owner = excluded.owner, expires_at = excluded.expires_at"
                " WHERE chunk_claims.owner = excluded.owner OR chunk_claims.expires_at < ?"
                " RETURNING chunk_hash",
                (
                    workspace,
                    owner,
                    now + lease_seconds,
                    json.dumps(list(hashes)),
                    workspace,
                    json.dumps(list(extractors)),
                    now,
                ),
            ).fetchall()
        return {row[0] for row in rows}

    def save_extraction(
        self,
        chunk_hash: str,
        workspace: str,
        entities: Sequence[Record],
        relations: Sequence[Record],
        extractor: str = LLM_EXTRACTOR,
    ) -> None:
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM chunks WHERE hash = ?", (chunk_hash,)).fetchone():
                return  # collected while it was being extracted: nothing to attach to
            ids: dict[str, int] = {}

            def mention(name: str, entity_type: str | None, description: str | None) -> int:
                conn.execute(
                    "INSERT INTO entities(workspace, name, name_key, entity_type)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT(workspace, name) DO UPDATE"
                    " SET entity_type = coalesce(entity_type, excluded.entity_type)",
                    (workspace, name, name.casefold(), entity_type),
                )
                entity_id = conn.execute(
                    "SELECT entity_id FROM entities WHERE workspace = ? AND name = ?",
                    (workspace, name),
                ).fetchone()[0]
                conn.execute(
                    "INSERT INTO mentions(entity_id, chunk_hash, workspace, entity_type,"
                    " description) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                    " entity_type = excluded.entity_type, description = excluded.description",
                    (entity_id, chunk_hash, workspace, entity_type, description),
                )
                ids[name] = entity_id
                return entity_id

            for entity in entities:
                mention(entity["name"], entity.get("entity_type"), entity.get("description"))
            conn.execute(
                "DELETE FROM relations WHERE chunk_hash = ? AND workspace = ?",
                (chunk_hash, workspace),
            )
            for rel in relations:
                source = ids.get(rel["source"]) or mention(rel["source"], None, None)
                target = ids.get(rel["target"]) or mention(rel["target"], None, None)
                conn.execute(
                    "INSERT INTO relations(chunk_hash, workspace, source_id, target_id,"
                    " description, keywords, weight) VALUES (?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT DO UPDATE SET description = excluded.description,"
                    " keywords = excluded.keywords, weight = excluded.weight",
                    (
                        chunk_hash,
                        workspace,
                        source,
                        target,
                        rel.get("description"),
                        rel.get("keywords"),
                        rel.get("weight"),
                    ),
                )
            # Mentions this extraction no longer makes go last, after the new
            # ones exist, so a kept entity is never collected in between.
            conn.execute(
                "DELETE FROM mentions WHERE chunk_hash = ? AND workspace = ?"
                " AND entity_id NOT IN (SELECT value FROM json_each(?))",
                (chunk_hash, workspace, json.dumps(list(ids.values()))),
            )
            conn.execute(
                "INSERT INTO chunk_extractions(chunk_hash, workspace, extractor, extracted_at)"
                " VALUES (?, ?, ?, ?)"
                " ON CONFLICT DO UPDATE SET extracted_at = excluded.extracted_at",
                (chunk_hash, workspace, extractor, utcnow()),
            )
            conn.execute(
                "DELETE FROM chunk_claims WHERE chunk_hash = ? AND workspace = ?",
                (chunk_hash, workspace),
            )

    def finish_reconciliation(
        self,
        session_id: str,
        owner: str,
        status: str,
        finished_at: str,
        summary: Record | None,
        error: str | None,
    ) -> bool:
        with self._write() as conn:
            row = conn.execute(
                "SELECT content_version = claim_version FROM sessions"
                " WHERE session_id = ? AND claim_owner = ? AND reconciliation_status = ?",
                (session_id, owner, RUNNING),
            ).fetchone()
            if row is None:
                return False
            final = status if row[0] else PENDING
            conn.execute(
                "UPDATE sessions SET reconciliation_status = ?,"
                " reconciled_at = CASE WHEN ? = ? THEN ? ELSE reconciled_at END,"
                " reconciliation_error = ?, last_summary = ?,"
                " claim_owner = NULL, claim_expires_at = NULL, claim_version = NULL"
                " WHERE session_id = ?",
                (
                    final,
                    final,
                    RECONCILED,
                    finished_at,
                    error if status == FAILED else None,
                    json.dumps(summary) if summary is not None else None,
                    session_id,
                ),
            )
            return True

    def session_mentions(self, session_id: str) -> list[Record]:
        rows = self._read(
            "SELECT e.name, e.workspace, m.entity_type, m.description, m.chunk_hash"
            " FROM mentions m"
            f" JOIN (SELECT DISTINCT hash FROM ({_SESSION_CHUNKS})) s ON s.hash = m.chunk_hash"
            " JOIN entities e ON e.entity_id = m.entity_id",
            (session_id, session_id),
        )
        return [dict(r) for r in rows]

    def entity_sessions(self, name: str, user_id: str) -> list[Record]:
        # The sessions that mention the name are found once (entity -> its
        # mentions' chunks -> the actions and memories holding them), then
        # joined to this user's sessions: a test per session of the user
        # (a correlated EXISTS) took seconds once an entity was common.
        rows = self._read(
            "WITH hits(session_id) AS ("
            "   SELECT a.session_id FROM entities e"
            "   JOIN mentions m ON m.entity_id = e.entity_id"
            "   JOIN unit_chunks uc ON uc.chunk_hash = m.chunk_hash AND uc.unit_kind = 'action'"
            "   JOIN actions a ON a.action_key = uc.unit_id"
            "   WHERE e.name_key = :name_key"
            "   UNION"
            "   SELECT mm.session_id FROM entities e"
            "   JOIN mentions m ON m.entity_id = e.entity_id"
            "   JOIN unit_chunks uc ON uc.chunk_hash = m.chunk_hash AND uc.unit_kind = 'memory'"
            "   JOIN memories mm ON mm.memory_id = uc.unit_id"
            "   WHERE e.name_key = :name_key AND mm.session_id IS NOT NULL)"
            f" SELECT {', '.join('s.' + c for c in _SESSION_COLUMNS.split(', '))}"
            " FROM hits JOIN sessions s ON s.session_id = hits.session_id"
            " WHERE s.user_id = :user_id"
            " ORDER BY coalesce(s.ended_at, s.started_at) DESC, s.session_id DESC",
            {"name_key": name.casefold(), "user_id": user_id},
        )
        return [_session_record(r) for r in rows]

    def user_entity_mentions(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        # Each session's chunks once (as session_mentions reads them), only of
        # sessions the user owns, then their mentions grouped by name: the
        # type is the first one given, in chunk-hash order. CROSS JOIN keeps
        # SQLite's join order: from the asked sessions to their chunks, rather
        # than through every chunk of the store.
        rows = self._read(
            "WITH chunks(session_id, hash) AS ("
            "   SELECT s.session_id, uc.chunk_hash FROM json_each(:ids) j"
            "   CROSS JOIN sessions s ON s.session_id = j.value AND s.user_id = :user_id"
            "   CROSS JOIN actions a ON a.session_id = s.session_id"
            "   CROSS JOIN unit_chunks uc ON uc.unit_kind = 'action' AND uc.unit_id = a.action_key"
            "   UNION"
            "   SELECT s.session_id, uc.chunk_hash FROM json_each(:ids) j"
            "   CROSS JOIN sessions s ON s.session_id = j.value AND s.user_id = :user_id"
            "   CROSS JOIN memories mm ON mm.session_id = s.session_id AND mm.user_id = s.user_id"
            "   CROSS JOIN unit_chunks uc"
            "   ON uc.unit_kind = 'memory' AND uc.unit_id = mm.memory_id),"
            " hits AS ("
            "   SELECT c.session_id, e.name, first_value(m.entity_type) OVER ("
            "     PARTITION BY c.session_id, e.name"
            "     ORDER BY m.entity_type IS NULL, m.chunk_hash, e.workspace) AS entity_type"
            "   FROM chunks c JOIN mentions m ON m.chunk_hash = c.hash"
            "   JOIN entities e ON e.entity_id = m.entity_id)"
            " SELECT session_id, name, max(entity_type) AS entity_type, count(*) AS mentions"
            " FROM hits GROUP BY session_id, name ORDER BY session_id, name",
            {"user_id": user_id, "ids": json.dumps(list(session_ids))},
        )
        return [dict(r) for r in rows]
