"""The embedded engine: one SQLite file, safe for many processes at once.

Why these choices:

* WAL journal, so readers never block the writer and hook processes, a cron
  sweep and the user's app can share one file; ``synchronous=NORMAL``, which
  in WAL mode survives any process crash (only a power cut can drop the last
  commits).
* Every write runs in ``BEGIN IMMEDIATE``: the write lock is taken up front,
  so the busy timeout applies and a transaction never fails half way when it
  upgrades from reading to writing.
* FTS5 over an external-content table, kept in sync by triggers; ranking is
  BM25. The search query is rendered from the parsed tree, never passed
  through, so no FTS5 syntax can be injected.
* ``PRAGMA user_version`` is the schema version; ``MIGRATIONS`` brings any
  older file forward on open, under the write lock, so concurrent openers
  migrate once.

The graph is stored relationally: HAS_MEMORY / HAD_SESSION are ``user_id``
columns, PRODUCED_MEMORY is ``memories.session_id``, HAS_ACTION is
``actions.session_id`` and FOLLOWED_BY links ``seq`` to ``seq + 1``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sessions_graph.clock import utcnow
from sessions_graph.engines.base import (
    FAILED,
    LLM_EXTRACTOR,
    PENDING,
    RECONCILED,
    RUNNING,
    ActionsAdded,
    Engine,
    ImportCursor,
    Record,
    not_found_for_user,
)
from sessions_graph.errors import (
    MemoryValidationError,
    StoreBusyError,
    StoreError,
    StoreUnavailableError,
)
from sessions_graph.query import (
    Node,
    local_score,
    matches,
    needs_local,
    substrings,
    to_fts5,
    tokenize,
)
from sessions_graph.index_text.records import group_entity_units
from sessions_graph.index_text.turns import TURN_RADIUS, asks, speaker, tells_time, turn_documents
from sessions_graph.validation import check_workspace

#: A recall term found in more turn documents than this is a common term
#: (``SQLiteEngine._turn_matches``), left out of the search when others remain.
COMMON_TURN_DOCS = 1000
#: When even the least common terms select more documents than that, only
#: the newest this many of them are ranked: a question of only very common
#: words trades older matches for a bounded time.
RANKED_TURN_DOCS = 5000

#: How long a writer waits for the lock before giving up, in milliseconds.
BUSY_TIMEOUT_MS = 30_000
#: What a connection past its wait budget still waits, in milliseconds:
#: enough for another process's short transaction, too little to stall a hook.
DEADLINE_GRACE_MS = 100
#: Bytes of WAL kept after a checkpoint resets it (SQLite's auto-checkpoint
#: fires at 1,000 pages, about 4 MB).
JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024

MIGRATIONS: list[str] = [
    # 1: users, memories (+ full-text index), sessions, actions.
    """
    CREATE TABLE users (
        user_id    TEXT PRIMARY KEY,
        created_at TEXT NOT NULL
    );
    CREATE TABLE memories (
        rowid      INTEGER PRIMARY KEY,
        memory_id  TEXT NOT NULL UNIQUE,
        user_id    TEXT NOT NULL REFERENCES users(user_id),
        content    TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX memories_by_user ON memories(user_id, created_at DESC, memory_id DESC);
    CREATE INDEX memories_by_session ON memories(session_id, created_at DESC, memory_id DESC);
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, content='memories', content_rowid='rowid',
        tokenize='unicode61 remove_diacritics 0'
    );
    CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
    END;
    CREATE TRIGGER memories_au AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content)
        VALUES ('delete', old.rowid, old.content);
        INSERT INTO memories_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TABLE sessions (
        session_id            TEXT PRIMARY KEY,
        user_id               TEXT NOT NULL REFERENCES users(user_id),
        started_at            TEXT,
        ended_at              TEXT,
        cwd                   TEXT,
        project_key           TEXT,
        reconciliation_status TEXT,
        reconciled_at         TEXT,
        reconciliation_error  TEXT,
        last_summary          TEXT,
        content_version       INTEGER NOT NULL DEFAULT 0,
        claim_owner           TEXT,
        claim_expires_at      REAL,
        claim_version         INTEGER,
        import_source         TEXT,
        import_offset         INTEGER NOT NULL DEFAULT 0,
        action_count          INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_user ON sessions(user_id, started_at DESC);
    CREATE INDEX sessions_by_status ON sessions(reconciliation_status);
    CREATE TABLE actions (
        action_id   TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(session_id),
        seq         INTEGER NOT NULL,
        action_type TEXT NOT NULL,
        text        TEXT NOT NULL,
        timestamp   TEXT,
        tool_name   TEXT,
        tool_use_id TEXT,
        is_error    INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_id, seq)
    );
    """,
    # 2: reconciliation. HAS_CHUNK is unit_chunks, MENTIONED_IN is mentions,
    # DIRECTED is relations (kept per chunk, so they go when the chunk goes).
    # Triggers collect garbage: a chunk no unit references is deleted (its
    # mentions, relations and extraction marks cascade), and an entity left
    # with no mention is deleted (its relations cascade).
    """
    CREATE TABLE chunks (
        hash TEXT PRIMARY KEY,
        text TEXT NOT NULL
    );
    CREATE TABLE unit_chunks (
        unit_kind  TEXT NOT NULL,
        unit_id    TEXT NOT NULL,
        chunk_hash TEXT NOT NULL REFERENCES chunks(hash),
        position   INTEGER NOT NULL,
        PRIMARY KEY (unit_kind, unit_id, chunk_hash)
    );
    CREATE INDEX unit_chunks_by_chunk ON unit_chunks(chunk_hash);
    CREATE TABLE unit_hashes (
        unit_kind    TEXT NOT NULL,
        unit_id      TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        PRIMARY KEY (unit_kind, unit_id)
    );
    CREATE TABLE chunk_extractions (
        chunk_hash   TEXT NOT NULL REFERENCES chunks(hash) ON DELETE CASCADE,
        workspace    TEXT NOT NULL,
        extracted_at TEXT NOT NULL,
        PRIMARY KEY (chunk_hash, workspace)
    );
    CREATE TABLE entities (
        entity_id   INTEGER PRIMARY KEY,
        workspace   TEXT NOT NULL,
        name        TEXT NOT NULL,
        name_key    TEXT NOT NULL,
        entity_type TEXT,
        UNIQUE (workspace, name)
    );
    CREATE INDEX entities_by_key ON entities(name_key);
    CREATE TABLE mentions (
        entity_id   INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
        chunk_hash  TEXT NOT NULL REFERENCES chunks(hash) ON DELETE CASCADE,
        workspace   TEXT NOT NULL,
        entity_type TEXT,
        description TEXT,
        PRIMARY KEY (entity_id, chunk_hash)
    );
    CREATE INDEX mentions_by_chunk ON mentions(chunk_hash, workspace);
    CREATE TABLE relations (
        chunk_hash  TEXT NOT NULL REFERENCES chunks(hash) ON DELETE CASCADE,
        workspace   TEXT NOT NULL,
        source_id   INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
        target_id   INTEGER NOT NULL REFERENCES entities(entity_id) ON DELETE CASCADE,
        description TEXT,
        keywords    TEXT,
        weight      REAL,
        PRIMARY KEY (chunk_hash, workspace, source_id, target_id)
    );
    CREATE INDEX relations_by_source ON relations(source_id);
    CREATE INDEX relations_by_target ON relations(target_id);
    CREATE TRIGGER unit_chunks_gc AFTER DELETE ON unit_chunks
    WHEN NOT EXISTS (SELECT 1 FROM unit_chunks WHERE chunk_hash = old.chunk_hash)
    BEGIN
        DELETE FROM chunks WHERE hash = old.chunk_hash;
    END;
    CREATE TRIGGER mentions_gc AFTER DELETE ON mentions
    WHEN NOT EXISTS (SELECT 1 FROM mentions WHERE entity_id = old.entity_id)
    BEGIN
        DELETE FROM entities WHERE entity_id = old.entity_id;
    END;
    CREATE TRIGGER memories_unit_ad AFTER DELETE ON memories BEGIN
        DELETE FROM unit_chunks WHERE unit_kind = 'memory' AND unit_id = old.memory_id;
        DELETE FROM unit_hashes WHERE unit_kind = 'memory' AND unit_id = old.memory_id;
    END;
    CREATE TRIGGER actions_unit_ad AFTER DELETE ON actions BEGIN
        DELETE FROM unit_chunks WHERE unit_kind = 'action' AND unit_id = old.action_id;
        DELETE FROM unit_hashes WHERE unit_kind = 'action' AND unit_id = old.action_id;
    END;
    """,
    # 3: chunk claims. A run holds a chunk it is extracting into a workspace
    # until it saves the extraction (which deletes the row) or the lease runs
    # out; a collected chunk takes its claims with it.
    """
    CREATE TABLE chunk_claims (
        chunk_hash TEXT NOT NULL REFERENCES chunks(hash) ON DELETE CASCADE,
        workspace  TEXT NOT NULL,
        owner      TEXT NOT NULL,
        expires_at REAL NOT NULL,
        PRIMARY KEY (chunk_hash, workspace)
    );
    """,
    # 4: recall's turn index. Each action is one document: its own text
    # (``body``) and its neighbours' in the session (``context``, weighed
    # 0.3 by the rank function), because a turn often only makes sense with
    # the ones around it. Kept in step by add_actions in the same
    # transaction, so a hook's actions are searchable as soon as they are
    # stored; ``turn_docs`` maps documents to actions (whose implicit rowid
    # VACUUM may renumber) and holds what recall filters on. Porter stemming
    # on top of unicode61: recall matches "databases" to "database".
    """
    CREATE TABLE turn_docs (
        rowid       INTEGER PRIMARY KEY,
        action_id   TEXT NOT NULL UNIQUE,
        user_id     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        action_type TEXT NOT NULL,
        timestamp   TEXT
    );
    CREATE VIRTUAL TABLE turns_fts USING fts5(
        body, context, tokenize='porter unicode61 remove_diacritics 2'
    );
    INSERT INTO turns_fts(turns_fts, rank) VALUES ('rank', 'bm25(1.0, 0.3)');
    CREATE TRIGGER actions_turn_ad AFTER DELETE ON actions BEGIN
        DELETE FROM turns_fts
        WHERE rowid = (SELECT rowid FROM turn_docs WHERE action_id = old.action_id);
        DELETE FROM turn_docs WHERE action_id = old.action_id;
    END;
    """,
    # 5: the import cursor's fingerprint of the transcript prefix it stands
    # after, so that a rewritten transcript is read again, not from mid-line.
    """
    ALTER TABLE sessions ADD COLUMN import_fingerprint TEXT;
    """,
    # 6: extraction marks per extractor ('llm' or 'local'), so that an LLM
    # pass finds the chunks the local extractor did; earlier marks are the LLM's.
    """
    CREATE TABLE chunk_extractions_by (
        chunk_hash   TEXT NOT NULL REFERENCES chunks(hash) ON DELETE CASCADE,
        workspace    TEXT NOT NULL,
        extractor    TEXT NOT NULL,
        extracted_at TEXT NOT NULL,
        PRIMARY KEY (chunk_hash, workspace, extractor)
    );
    INSERT INTO chunk_extractions_by(chunk_hash, workspace, extractor, extracted_at)
        SELECT chunk_hash, workspace, 'llm', extracted_at FROM chunk_extractions;
    DROP TABLE chunk_extractions;
    ALTER TABLE chunk_extractions_by RENAME TO chunk_extractions;
    """,
    # 7: recent sessions of a user in one project (the SessionStart hook).
    """
    CREATE INDEX sessions_by_project ON sessions(user_id, project_key, started_at DESC);
    """,
    # 8: how many secrets redaction took out of each action's text when it
    # was recorded (actions recorded before this version: 0, text as it was).
    """
    ALTER TABLE actions ADD COLUMN redactions INTEGER NOT NULL DEFAULT 0;
    """,
    # 9: memory files (the Anthropic memory tool): a Memory at a path, unique per
    # user, with its newest versions. Both go with their Memory (cascade).
    """
    CREATE TABLE memory_files (
        memory_id TEXT PRIMARY KEY REFERENCES memories(memory_id) ON DELETE CASCADE,
        user_id   TEXT NOT NULL,
        path      TEXT NOT NULL,
        version   INTEGER NOT NULL,
        UNIQUE (user_id, path)
    );
    CREATE TABLE memory_file_versions (
        memory_id  TEXT NOT NULL REFERENCES memories(memory_id) ON DELETE CASCADE,
        version    INTEGER NOT NULL,
        path       TEXT NOT NULL,
        content    TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (memory_id, version)
    );
    """,
    # 10: who speaks each turn and whether it asks (index_text.turns.speaker /
    # asks), read by recall's weights. Computed in Python for the turns
    # already indexed: ``_migrate`` registers both functions for this.
    """
    ALTER TABLE turn_docs ADD COLUMN speaker TEXT;
    ALTER TABLE turn_docs ADD COLUMN asks INTEGER NOT NULL DEFAULT 0;
    UPDATE turn_docs SET (speaker, asks) = (
        SELECT sg_speaker(a.text), sg_asks(a.text) FROM actions a
        WHERE a.action_id = turn_docs.action_id
    );
    """,
    # 11: whether each turn says when (index_text.turns.tells_time), read by
    # recall's weights; computed in Python like 10.
    """
    ALTER TABLE turn_docs ADD COLUMN tells_time INTEGER NOT NULL DEFAULT 0;
    UPDATE turn_docs SET tells_time = coalesce((
        SELECT sg_tells_time(a.text) FROM actions a WHERE a.action_id = turn_docs.action_id
    ), 0);
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)

_MEMORY_COLUMNS = "memory_id, user_id, content, session_id, created_at, updated_at"
_SESSION_COLUMNS = (
    "session_id, user_id, started_at, ended_at, cwd, project_key, reconciliation_status,"
    " reconciled_at, reconciliation_error, last_summary, content_version, action_count"
)
_ACTION_COLUMNS = (
    "action_id, session_id, seq, action_type, text, timestamp, tool_name, tool_use_id, is_error,"
    " redactions"
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


class SQLiteEngine(Engine):
    """The embedded engine over the SQLite file at ``path``."""

    name = "embedded"

    def __init__(
        self,
        path: str | Path,
        *,
        wait_budget: float | None = None,
        checkpoint_on_close: bool = True,
    ) -> None:
        """``wait_budget``: seconds from now after which this connection no
        longer waits for a lock (beyond a short grace), so that a hook spends
        a bounded time on a locked file and spools its event instead
        (``StoreBusyError``); None: every write waits up to ``BUSY_TIMEOUT_MS``.

        ``checkpoint_on_close=False`` is for short-lived processes (hooks):
        closing the last connection normally checkpoints the WAL into the
        database (four fdatasync calls) and deletes it, only for the next hook
        process to create it again. Without it the WAL is left in place:
        SQLite reads it back on the next open, exactly as after a crash, and
        the automatic checkpoint (every 1,000 pages) still folds it in.
        """
        self.path = Path(path).expanduser()
        self._lock = threading.RLock()
        self._deadline = None if wait_budget is None else time.monotonic() + wait_budget
        self._busy_ms = self._wait_ms()
        self._checkpoint_on_close = checkpoint_on_close
        try:
            _create_private(self.path)
            _writable_sidecars(self.path)
            self._conn = sqlite3.connect(
                self.path,
                timeout=self._busy_ms / 1000,
                isolation_level=None,  # we issue BEGIN / COMMIT ourselves
                check_same_thread=False,  # guarded by self._lock instead
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailableError(f"cannot open database {self.path}: {exc}") from None
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            # A WAL that a big transaction grew is cut back to this size when
            # it is next reset, since hook processes no longer delete it.
            self._conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            self._migrate()
        except sqlite3.Error as exc:  # e.g. "file is not a database"
            self._conn.close()
            raise _store_error(exc, self.path) from None
        except StoreError:
            self._conn.close()
            raise

    # -- plumbing -----------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with the write lock up front."""
        with self._lock:
            try:
                if self._deadline is not None and (busy := self._wait_ms()) != self._busy_ms:
                    self._conn.execute(f"PRAGMA busy_timeout = {busy}")
                    self._busy_ms = busy
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _store_error(exc, self.path) from None
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:  # the driver's words, as the package's error
                self._rollback()
                raise _store_error(exc, self.path) from None
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may have rolled back already (an I/O error, a full disk); a
        # second rollback's error must not hide the first one.
        if self._conn.in_transaction:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _wait_ms(self) -> int:
        """How long the next write may wait for the lock."""
        if self._deadline is None:
            return BUSY_TIMEOUT_MS
        left = int((self._deadline - time.monotonic()) * 1000)
        return min(BUSY_TIMEOUT_MS, max(DEADLINE_GRACE_MS, left))

    def _read(
        self, sql: str, params: Sequence[Any] | dict[str, Any] = ()
    ) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, self.path) from None

    def _migrate(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return  # the common case, and all a hook process pays
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this"
                f" sessions-graph understands ({SCHEMA_VERSION}): upgrade sessions-graph"
            )
        try:
            # journal_mode is persistent in the file, so it is set once here.
            self._conn.execute("PRAGMA journal_mode = WAL")
            _add_recall_functions(self._conn)
            with self._write() as conn:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                for number in range(version, SCHEMA_VERSION):
                    for statement in _statements(MIGRATIONS[number]):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {number + 1}")
                # Actions stored before the turn index existed are indexed
                # now, in the migrating transaction (a no-op on a new file).
                self._index_unindexed_turns(conn)
        except sqlite3.Error as exc:
            raise _store_error(exc, self.path) from None

    # -- lifecycle -----------------------------------------------------------
    def setup(self) -> None:
        self._migrate()

    def drop(self) -> None:
        # Tables reference each other; with the checks off (they can only be
        # switched outside a transaction) they can be dropped in any order.
        with self._lock:
            self._conn.execute("PRAGMA foreign_keys = OFF")
            try:
                with self._write() as conn:
                    objects = conn.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table'"
                        " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%'"
                        " AND name NOT LIKE 'turns_fts_%'"
                    ).fetchall()
                    for (name,) in objects:
                        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                    conn.execute("PRAGMA user_version = 0")
            finally:
                self._conn.execute("PRAGMA foreign_keys = ON")

    def close(self) -> None:
        with self._lock:
            if not self._checkpoint_on_close:
                no_checkpoint = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
                if no_checkpoint is None or not hasattr(self._conn, "setconfig"):
                    # Python < 3.12 cannot ask SQLite to skip the checkpoint:
                    # the connection is left for the process's exit to drop
                    # (the hook process ends with os._exit, so it never runs).
                    return
                self._conn.setconfig(no_checkpoint, True)
            self._conn.close()

    def status(self) -> Record:
        version = self._read("PRAGMA user_version")[0][0]
        counts: dict[str, int] = {}
        if version == SCHEMA_VERSION:
            for table in ("users", "sessions", "actions", "memories", "chunks", "entities"):
                counts[table] = self._read(f"SELECT count(*) FROM {table}")[0][0]
        return {
            "engine": self.name,
            "location": str(self.path),
            "schema_version": version,
            "counts": counts,
        }

    def user_counts(self, user_id: str) -> Record:
        row = self._read(
            "WITH units(kind, id) AS ("
            "   SELECT 'action', a.action_id FROM actions a"
            "   JOIN sessions s ON s.session_id = a.session_id WHERE s.user_id = ?"
            "   UNION ALL SELECT 'memory', memory_id FROM memories WHERE user_id = ?),"
            " user_chunks(hash) AS ("
            "   SELECT DISTINCT uc.chunk_hash FROM unit_chunks uc"
            "   JOIN units u ON uc.unit_kind = u.kind AND uc.unit_id = u.id)"
            " SELECT (SELECT count(*) FROM sessions WHERE user_id = ?) AS sessions,"
            " (SELECT count(*) FROM units WHERE kind = 'action') AS actions,"
            " (SELECT count(*) FROM units WHERE kind = 'memory') AS memories,"
            " (SELECT count(*) FROM user_chunks) AS chunks,"
            " (SELECT count(DISTINCT m.entity_id) FROM mentions m"
            "   JOIN user_chunks c ON c.hash = m.chunk_hash) AS entities",
            (user_id, user_id, user_id),
        )
        return dict(row[0])

    # -- memories --------------------------------------------------------------
    def _ensure_user(self, conn: sqlite3.Connection, user_id: str, now: str) -> None:
        conn.execute(
            "INSERT INTO users(user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (user_id, now),
        )

    def _ensure_session(
        self, conn: sqlite3.Connection, session_id: str, user_id: str, now: str
    ) -> None:
        """MERGE a session for ``user_id``; refuse one that belongs to another user."""
        self._ensure_user(conn, user_id, now)
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

    def _insert_memory(self, conn: sqlite3.Connection, memory: Record) -> None:
        """INSERT a Memory, MERGE its User and Session, touch the Session."""
        self._ensure_user(conn, memory["user_id"], memory["created_at"])
        if memory["session_id"]:
            self._ensure_session(
                conn, memory["session_id"], memory["user_id"], memory["created_at"]
            )
            conn.execute(_TOUCH_SESSION, (memory["session_id"],))
        conn.execute(
            f"INSERT INTO memories({_MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            tuple(memory[k] for k in _MEMORY_COLUMNS.split(", ")),
        )

    def save_memory(self, memory: Record) -> None:
        with self._write() as conn:
            self._insert_memory(conn, memory)

    def get_memory(self, memory_id: str, user_id: str | None = None) -> Record | None:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id = ?"
            " AND (? IS NULL OR user_id = ?)",
            (memory_id, user_id, user_id),
        )
        return dict(rows[0]) if rows else None

    def list_memories(self, user_id: str, limit: int) -> list[Record]:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE user_id = ?"
            " ORDER BY created_at DESC, memory_id DESC LIMIT ?",
            (user_id, limit),
        )
        return [dict(r) for r in rows]

    def list_session_memories(self, session_id: str, limit: int) -> list[Record]:
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE session_id = ?"
            " ORDER BY created_at DESC, memory_id DESC LIMIT ?",
            (session_id, limit),
        )
        return [dict(r) for r in rows]

    def search_memories(self, user_id: str, query: Node, limit: int) -> list[Record]:
        if needs_local(query):
            return self._search_substrings(user_id, query, limit)
        # ORDER BY rank alone (FTS5's bm25, lower is better) lets FTS5 hand
        # rows over already ranked and stop at the limit; any second sort key
        # makes SQLite sort every match itself, a third slower at 100k
        # memories. Ties within the page are ordered newest first afterwards.
        rows = self._read(
            f"SELECT {', '.join('m.' + c for c in _MEMORY_COLUMNS.split(', '))},"
            " -memories_fts.rank AS score"
            " FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid"
            " WHERE memories_fts MATCH ? AND m.user_id = ?"
            " ORDER BY memories_fts.rank LIMIT ?",
            (to_fts5(query), user_id, limit),
        )
        records = [dict(r) for r in rows]
        records.sort(key=lambda r: (r["score"], r["created_at"], r["memory_id"]), reverse=True)
        return records

    def _search_substrings(self, user_id: str, query: Node, limit: int) -> list[Record]:
        """A query unicode61 cannot answer (CJK is indexed as whole runs):
        the user's memories holding one of its pieces (``instr``, no LIKE
        wildcards to escape), then the exact token rules in Python."""
        pieces = substrings(query)
        if not pieces:
            return []
        found = " OR ".join(["instr(lower(content), ?) > 0"] * len(pieces))
        rows = self._read(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE user_id = ? AND ({found})",
            (user_id, *pieces),
        )
        hits = []
        for row in rows:
            tokens = tokenize(row["content"])
            if matches(query, tokens):
                hits.append({**dict(row), "score": local_score(query, tokens)})
        hits.sort(key=lambda r: (r["score"], r["created_at"], r["memory_id"]), reverse=True)
        return hits[:limit]

    def update_memory(
        self, memory_id: str, content: str, updated_at: str, user_id: str | None = None
    ) -> Record | None:
        with self._write() as conn:
            row = conn.execute(
                f"UPDATE memories SET content = ?, updated_at = ? WHERE memory_id = ?"
                f" AND (? IS NULL OR user_id = ?) RETURNING {_MEMORY_COLUMNS}",
                (content, updated_at, memory_id, user_id, user_id),
            ).fetchone()
            if row is None:
                return None
            record = dict(row)
            if record["session_id"]:
                conn.execute(_TOUCH_SESSION, (record["session_id"],))
            return record

    def delete_memory(self, memory_id: str, user_id: str | None = None) -> bool:
        with self._write() as conn:
            row = conn.execute(
                "DELETE FROM memories WHERE memory_id = ? AND (? IS NULL OR user_id = ?)"
                " RETURNING session_id",
                (memory_id, user_id, user_id),
            ).fetchone()
            if row is None:
                return False
            if row[0]:
                conn.execute(_TOUCH_SESSION, (row[0],))
            return True

    # -- sessions and actions -----------------------------------------------------
    def start_session(
        self,
        session_id: str,
        user_id: str,
        started_at: str,
        cwd: str | None,
        project_key: str | None,
    ) -> None:
        with self._write() as conn:
            self._ensure_session(conn, session_id, user_id, started_at)
            conn.execute(
                "UPDATE sessions SET cwd = coalesce(cwd, ?),"
                " project_key = coalesce(project_key, ?),"
                " started_at = min(coalesce(started_at, ?), ?)"  # timestamps sort as text
                " WHERE session_id = ?",
                (cwd, project_key, started_at, started_at, session_id),
            )

    def add_actions(
        self, session_id: str, user_id: str, actions: Sequence[Record]
    ) -> ActionsAdded:
        with self._write() as conn:
            row = conn.execute(
                "SELECT action_count, user_id FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:  # never started: the first action dates the session
                started = (actions[0].get("timestamp") if actions else None) or utcnow()
                self._ensure_session(conn, session_id, user_id, started)
            elif row[1] != user_id:
                raise MemoryValidationError(not_found_for_user(session_id, user_id))
            # Another session's ids are skipped (ON CONFLICT below); count them.
            ids = json.dumps([a["action_id"] for a in actions])
            foreign = conn.execute(
                "SELECT count(*) FROM actions WHERE action_id IN (SELECT value FROM json_each(?))"
                " AND session_id != ?",
                (ids, session_id),
            ).fetchone()[0]
            seq = row[0] if row else 0
            added = 0
            for action in actions:
                cursor = conn.execute(
                    f"INSERT INTO actions({_ACTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT(action_id) DO NOTHING",
                    (
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
        message = (
            "(SELECT {col} FROM actions a WHERE a.session_id = s.session_id"
            " AND a.action_type = '{kind}' ORDER BY a.seq {order} LIMIT 1)"
        )
        first = message.format(col="{col}", kind="user_message", order="ASC")
        last = message.format(col="{col}", kind="assistant_message", order="DESC")
        rows = self._read(
            "SELECT s.session_id, s.user_id, s.started_at, s.ended_at, s.cwd, s.project_key,"
            " s.action_count,"
            f" {first.format(col='substr(a.text, 1, :chars)')} AS first_user_message,"
            f" {first.format(col='a.timestamp')} AS first_user_message_at,"
            f" {last.format(col='substr(a.text, 1, :chars)')} AS last_assistant_message,"
            f" {last.format(col='a.timestamp')} AS last_assistant_message_at"
            " FROM sessions s WHERE s.user_id = :user"
            " AND (:project IS NULL OR s.project_key = :project)"
            " AND (:before IS NULL OR s.started_at < :before)"
            " ORDER BY s.started_at DESC, s.session_id DESC LIMIT :limit",
            {
                "chars": preview_chars,
                "user": user_id,
                "project": project_key,
                "before": before,
                "limit": limit,
            },
        )
        return [dict(r) for r in rows]

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

    # -- pages and memory files ---------------------------------------------------
    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        rows = self._read(
            # seq numbers are consecutive from 0: a page is a range of them.
            f"SELECT {_ACTION_COLUMNS} FROM actions WHERE session_id = ?"
            " AND seq >= ? AND seq < ? ORDER BY seq",
            (session_id, offset, offset + limit),
        )
        return [_action_record(r) for r in rows]

    def get_memory_file(self, user_id: str, path: str) -> Record | None:
        rows = self._read(
            f"SELECT {', '.join('m.' + c for c in _MEMORY_COLUMNS.split(', '))}, f.path, f.version"
            " FROM memory_files f JOIN memories m ON m.memory_id = f.memory_id"
            " WHERE f.user_id = ? AND f.path = ?",
            (user_id, path),
        )
        return dict(rows[0]) if rows else None

    def list_memory_files(self, user_id: str, prefix: str) -> list[Record]:
        rows = self._read(
            "SELECT f.path, f.memory_id, length(m.content) AS size, m.updated_at, f.version"
            " FROM memory_files f JOIN memories m ON m.memory_id = f.memory_id"
            f" WHERE f.user_id = ? AND {_AT_OR_UNDER} ORDER BY f.path",
            (user_id, prefix, prefix, prefix),
        )
        return [dict(r) for r in rows]

    @staticmethod
    def _file_conflict(
        conn: sqlite3.Connection, user_id: str, path: str, parents: Sequence[str]
    ) -> str | None:
        """Why no file may be put at ``path`` now, or None."""
        if conn.execute(
            "SELECT 1 FROM memory_files WHERE user_id = ? AND path = ?", (user_id, path)
        ).fetchone():
            return "exists"
        if conn.execute(
            f"SELECT 1 FROM memory_files f WHERE f.user_id = ? AND {_AT_OR_UNDER} LIMIT 1",
            (user_id, path, path, path),
        ).fetchone():
            return "directory"
        if parents and conn.execute(
            "SELECT 1 FROM memory_files WHERE user_id = ?"
            " AND path IN (SELECT value FROM json_each(?))",
            (user_id, json.dumps(list(parents))),
        ).fetchone():
            return "parent"
        return None

    @staticmethod
    def _keep_version(
        conn: sqlite3.Connection, row: Record, version: int, session_id: str | None, keep: int
    ) -> None:
        conn.execute(
            "INSERT INTO memory_file_versions(memory_id, version, path, content, session_id,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (row["memory_id"], version, row["path"], row["content"], session_id, row["updated_at"]),
        )
        conn.execute(
            "DELETE FROM memory_file_versions WHERE memory_id = ? AND version <= ?",
            (row["memory_id"], version - keep),
        )

    def create_memory_file(
        self, memory: Record, path: str, parents: Sequence[str], keep_versions: int
    ) -> str:
        with self._write() as conn:
            conflict = self._file_conflict(conn, memory["user_id"], path, parents)
            if conflict:
                return conflict
            self._insert_memory(conn, memory)
            conn.execute(
                "INSERT INTO memory_files(memory_id, user_id, path, version) VALUES (?, ?, ?, 1)",
                (memory["memory_id"], memory["user_id"], path),
            )
            self._keep_version(
                conn, {**memory, "path": path}, 1, memory["session_id"], keep_versions
            )
            return "created"

    def write_memory_file(
        self,
        user_id: str,
        path: str,
        content: str,
        session_id: str | None,
        updated_at: str,
        expected_version: int,
        keep_versions: int,
    ) -> Record | None:
        with self._write() as conn:
            row = conn.execute(
                "UPDATE memory_files SET version = version + 1"
                " WHERE user_id = ? AND path = ? AND version = ? RETURNING memory_id, version",
                (user_id, path, expected_version),
            ).fetchone()
            if row is None:
                return None
            memory_id, version = row
            if session_id:
                self._ensure_session(conn, session_id, user_id, updated_at)
            owner_session = conn.execute(
                "UPDATE memories SET content = ?, updated_at = ? WHERE memory_id = ?"
                " RETURNING session_id",
                (content, updated_at, memory_id),
            ).fetchone()[0]
            if owner_session:
                conn.execute(_TOUCH_SESSION, (owner_session,))
            written = {"memory_id": memory_id, "path": path, "content": content}
            self._keep_version(
                conn, {**written, "updated_at": updated_at}, version, session_id, keep_versions
            )
        return self.get_memory_file(user_id, path)

    def delete_memory_files(self, user_id: str, path: str) -> int:
        with self._write() as conn:
            rows = conn.execute(
                f"SELECT f.memory_id FROM memory_files f WHERE f.user_id = ? AND {_AT_OR_UNDER}",
                (user_id, path, path, path),
            ).fetchall()
            ids = [r[0] for r in rows]
            for memory_id in ids:
                session = conn.execute(
                    "DELETE FROM memories WHERE memory_id = ? RETURNING session_id", (memory_id,)
                ).fetchone()[0]
                if session:
                    conn.execute(_TOUCH_SESSION, (session,))
            return len(ids)

    def rename_memory_files(
        self,
        user_id: str,
        old_path: str,
        new_path: str,
        parents: Sequence[str],
        session_id: str | None,
        updated_at: str,
        keep_versions: int,
    ) -> str:
        with self._write() as conn:
            moving = conn.execute(
                "SELECT f.memory_id, f.path, f.version, m.content FROM memory_files f"
                " JOIN memories m ON m.memory_id = f.memory_id"
                f" WHERE f.user_id = ? AND {_AT_OR_UNDER}",
                (user_id, old_path, old_path, old_path),
            ).fetchall()
            if not moving:
                return "missing"
            conflict = self._file_conflict(conn, user_id, new_path, parents)
            if conflict:
                return "exists" if conflict == "directory" else conflict
            if session_id:
                self._ensure_session(conn, session_id, user_id, updated_at)
            for memory_id, path, version, content in moving:
                moved = new_path + path[len(old_path) :]
                conn.execute(
                    "UPDATE memory_files SET path = ?, version = ? WHERE memory_id = ?",
                    (moved, version + 1, memory_id),
                )
                conn.execute(
                    "UPDATE memories SET updated_at = ? WHERE memory_id = ?",
                    (updated_at, memory_id),
                )
                row = {
                    "memory_id": memory_id,
                    "path": moved,
                    "content": content,
                    "updated_at": updated_at,
                }
                self._keep_version(conn, row, version + 1, session_id, keep_versions)
            return "renamed"

    def memory_file_versions(self, user_id: str, path: str, limit: int) -> list[Record]:
        rows = self._read(
            "SELECT v.version, v.path, v.content, v.session_id, v.created_at"
            " FROM memory_files f JOIN memory_file_versions v ON v.memory_id = f.memory_id"
            " WHERE f.user_id = ? AND f.path = ? ORDER BY v.version DESC LIMIT ?",
            (user_id, path, limit),
        )
        return [dict(r) for r in rows]

    # == reconciliation ==
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
            "SELECT 'action' AS unit_kind, a.action_id AS unit_id, a.text, h.content_hash"
            " FROM actions a LEFT JOIN unit_hashes h"
            "   ON h.unit_kind = 'action' AND h.unit_id = a.action_id"
            " WHERE a.session_id = ? ORDER BY a.seq",
            (session_id,),
        ) + self._read(
            "SELECT 'memory' AS unit_kind, m.memory_id AS unit_id, m.content AS text,"
            " h.content_hash FROM memories m LEFT JOIN unit_hashes h"
            "   ON h.unit_kind = 'memory' AND h.unit_id = m.memory_id"
            " WHERE m.session_id = ? ORDER BY m.created_at, m.memory_id",
            (session_id,),
        )
        return [dict(r) for r in rows]

    def set_unit_chunks(
        self, unit_kind: str, unit_id: str, content_hash: str, chunks: Sequence[Record]
    ) -> None:
        table = _UNIT_TABLES.get(unit_kind)
        if table is None:
            raise MemoryValidationError(f"unknown unit kind {unit_kind!r}")
        hashes = [c["hash"] for c in chunks]
        with self._write() as conn:
            if not conn.execute(
                f"SELECT 1 FROM {table} WHERE {unit_kind}_id = ?", (unit_id,)
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
        rows = self._read(
            f"SELECT {', '.join('s.' + c for c in _SESSION_COLUMNS.split(', '))}"
            " FROM sessions s WHERE s.user_id = ? AND EXISTS ("
            "   SELECT 1 FROM entities e JOIN mentions m ON m.entity_id = e.entity_id"
            "   JOIN unit_chunks uc ON uc.chunk_hash = m.chunk_hash"
            "   LEFT JOIN actions a ON uc.unit_kind = 'action' AND a.action_id = uc.unit_id"
            "   LEFT JOIN memories mm ON uc.unit_kind = 'memory' AND mm.memory_id = uc.unit_id"
            "   WHERE e.name_key = ? AND coalesce(a.session_id, mm.session_id) = s.session_id)"
            " ORDER BY coalesce(s.ended_at, s.started_at) DESC, s.session_id DESC",
            (user_id, name.casefold()),
        )
        return [_session_record(r) for r in rows]

    # == recall ==
    def _index_turns(
        self, conn: sqlite3.Connection, session_id: str, user_id: str, first_seq: int
    ) -> None:
        """Index the session's actions from ``first_seq`` on and rewrite the
        context of the ones just before them: a batch costs one document per
        new action plus at most ``TURN_RADIUS`` rewritten."""
        rows = conn.execute(
            "SELECT a.action_id, a.seq, a.action_type, a.text, a.timestamp, d.rowid AS doc"
            " FROM actions a LEFT JOIN turn_docs d ON d.action_id = a.action_id"
            " WHERE a.session_id = ? AND a.seq >= ? ORDER BY a.seq",
            (session_id, first_seq - 2 * TURN_RADIUS),
        ).fetchall()
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
                "INSERT INTO turn_docs(action_id, user_id, session_id, action_type, timestamp,"
                " speaker, asks, tells_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row["action_id"],
                    user_id,
                    session_id,
                    row["action_type"],
                    row["timestamp"],
                    document["speaker"],
                    document["asks"],
                    document["tells_time"],
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
            " WHERE NOT EXISTS (SELECT 1 FROM turn_docs d WHERE d.action_id = a.action_id)"
        ).fetchall()
        for session_id, user_id in sessions:
            self._index_turns(conn, session_id, user_id, 0)

    def search_turns(
        self, user_id: str, terms: Sequence[Sequence[str]], limit: int, filters: Record
    ) -> list[Record]:
        matches = self._turn_matches(terms)
        if not matches:
            return []
        narrow, wide = matches
        rows = self._rank_turns(narrow, user_id, limit, filters)
        if not rows and wide != narrow:
            # Which words are common is counted over every user's documents:
            # for this user, the words left out may be all that matches.
            rows = self._rank_turns(wide, user_id, limit, filters)
        return rows

    def _rank_turns(self, match: str, user_id: str, limit: int, filters: Record) -> list[Record]:
        # Too many rows to rank fast: rank the user's newest RANKED_TURN_DOCS
        # of them, which FTS5 reads from a rowid bound without touching
        # older ones.
        first = 0
        if self._count_turns(match) > COMMON_TURN_DOCS:
            first = self._read(
                "SELECT coalesce(min(rowid), 0) FROM (SELECT turns_fts.rowid FROM turns_fts"
                " JOIN turn_docs d ON d.rowid = turns_fts.rowid"
                " WHERE turns_fts MATCH ? AND d.user_id = ? ORDER BY turns_fts.rowid DESC LIMIT ?)",
                (match, user_id, RANKED_TURN_DOCS),
            )[0][0]
        rows = self._read(
            "SELECT d.action_id, d.session_id, d.action_type, d.speaker, d.asks, d.tells_time,"
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
            {**r, "asks": bool(r["asks"]), "tells_time": bool(r["tells_time"])}
            for r in map(dict, rows)
        ]

    def _turn_matches(self, terms: Sequence[Sequence[str]]) -> tuple[str, str] | None:
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
        index at all."""
        # Tokens are letters and digits only, so quoting each phrase is safe.
        counted = sorted(
            (n, phrase)
            for phrase in dict.fromkeys('"' + " ".join(t) + '"' for t in terms)
            if (n := self._count_turns(phrase))
        )
        if not counted:
            return None
        wide = " OR ".join(p for _, p in counted)
        rare = [p for n, p in counted if n <= COMMON_TURN_DOCS]
        if rare:
            return " OR ".join(rare), wide
        chosen = [counted[0][1]]
        for _, phrase in counted[1:]:
            if self._count_turns(" AND ".join(chosen)) <= COMMON_TURN_DOCS:
                break
            if self._count_turns(" AND ".join([*chosen, phrase])):
                chosen.append(phrase)  # else: together they select nothing
        return " AND ".join(chosen), wide

    def _count_turns(self, match: str) -> int:
        """How many turn documents ``match`` selects, counted up to one more
        than ``COMMON_TURN_DOCS`` (all a caller needs to know, and cheap)."""
        return self._read(
            "SELECT count(*) FROM (SELECT 1 FROM turns_fts WHERE turns_fts MATCH ? LIMIT ?)",
            (match, COMMON_TURN_DOCS + 1),
        )[0][0]

    def turn_windows(self, user_id: str, action_ids: Sequence[str], radius: int) -> list[Record]:
        if not action_ids:
            return []
        rows = self._read(
            "SELECT h.action_id AS hit_id,"
            f" {', '.join('a.' + c for c in _ACTION_COLUMNS.split(', '))}"
            " FROM actions h JOIN sessions s ON s.session_id = h.session_id AND s.user_id = ?"
            " JOIN actions a ON a.session_id = h.session_id"
            "   AND a.seq BETWEEN h.seq - ? AND h.seq + ?"
            " WHERE h.action_id IN (SELECT value FROM json_each(?))",
            (user_id, radius, radius, json.dumps(list(action_ids))),
        )
        return [_action_record(r) for r in rows]

    def recall_entities(self, user_id: str, name_keys: Sequence[str]) -> list[Record]:
        if not name_keys:
            return []
        rows = self._read(
            "SELECT e.name, m.entity_type, m.description, uc.unit_kind, uc.unit_id,"
            " coalesce(a.session_id, mm.session_id) AS session_id,"
            " CASE WHEN uc.unit_kind = 'action' THEN coalesce(a.timestamp, s.started_at)"
            "      ELSE mm.created_at END AS timestamp, s.project_key, s.cwd"
            " FROM entities e JOIN mentions m ON m.entity_id = e.entity_id"
            " JOIN unit_chunks uc ON uc.chunk_hash = m.chunk_hash"
            " LEFT JOIN actions a ON uc.unit_kind = 'action' AND a.action_id = uc.unit_id"
            " LEFT JOIN memories mm ON uc.unit_kind = 'memory' AND mm.memory_id = uc.unit_id"
            " LEFT JOIN sessions s ON s.session_id = coalesce(a.session_id, mm.session_id)"
            " WHERE e.name_key IN (SELECT value FROM json_each(?))"
            "   AND (s.user_id = ? OR (s.session_id IS NULL AND mm.user_id = ?))"
            " ORDER BY e.name, m.chunk_hash",
            (json.dumps(list(name_keys)), user_id, user_id),
        )
        return group_entity_units([dict(r) for r in rows])

    def _graph_counts(self, conn: sqlite3.Connection) -> dict[str, int]:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("sessions", "actions", "memories", "chunks", "entities")
        }

    def _forget_sessions(self, conn: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        # The delete triggers drop the units' chunk links, and the collection
        # triggers then take every chunk and entity nothing else references.
        for sid in session_ids:
            conn.execute("DELETE FROM actions WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM memories WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM sessions WHERE session_id = ?", (sid,))

    def forget_session(self, session_id: str) -> Record:
        with self._write() as conn:
            before = self._graph_counts(conn)
            self._forget_sessions(conn, [session_id])
            after = self._graph_counts(conn)
        return {k: before[k] - after[k] for k in before}

    def forget_user(self, user_id: str) -> Record:
        with self._write() as conn:
            before = self._graph_counts(conn)
            sessions = conn.execute(
                "SELECT session_id FROM sessions WHERE user_id = ?", (user_id,)
            ).fetchall()
            self._forget_sessions(conn, [r[0] for r in sessions])
            conn.execute("DELETE FROM memories WHERE user_id = ?", (user_id,))
            users = conn.execute("DELETE FROM users WHERE user_id = ?", (user_id,)).rowcount
            after = self._graph_counts(conn)
        return {**{k: before[k] - after[k] for k in before}, "users": users}


#: A memory file's path is the prefix, or the file is under it (parameters:
#: prefix three times). '/' sorts just before '0', so the range is "prefix/...".
_AT_OR_UNDER = "(f.path = ? OR (f.path > ? || '/' AND f.path < ? || '0'))"

# A session's chunks in unit order (its actions by seq, then its memories by
# creation), one row per link; parameters: session_id, session_id.
#: The table holding each kind of reconcilable unit.
_UNIT_TABLES = {"action": "actions", "memory": "memories"}

_SESSION_CHUNKS = """
    SELECT 0 AS grp, a.seq AS o1, '' AS o2, uc.position, uc.chunk_hash AS hash
    FROM actions a JOIN unit_chunks uc ON uc.unit_kind = 'action' AND uc.unit_id = a.action_id
    WHERE a.session_id = ?
    UNION ALL
    SELECT 1, 0, m.created_at || m.memory_id, uc.position, uc.chunk_hash
    FROM memories m JOIN unit_chunks uc ON uc.unit_kind = 'memory' AND uc.unit_id = m.memory_id
    WHERE m.session_id = ?
"""



# The recall filters (``Engine.search_turns``) over turn_docs d and sessions s.
_TURN_FILTERS = """
    AND (:exclude IS NULL OR d.session_id != :exclude)
    AND (:only IS NULL OR d.session_id = :only)
    AND (:since IS NULL OR coalesce(d.timestamp, s.started_at) >= :since)
    AND (:until IS NULL OR coalesce(d.timestamp, s.started_at) <= :until)
    AND (:project IS NULL OR s.project_key = :project OR s.cwd = :project
         OR substr(s.cwd, 1, length(:project) + 1) = :project || '/')
"""


def _add_recall_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migrations call to compute, for turns indexed
    before, what recall weighs them by: one definition, in index_text.turns."""
    conn.create_function("sg_speaker", 1, lambda t: speaker(t or ""))
    conn.create_function("sg_asks", 1, lambda t: asks(t or ""))
    conn.create_function("sg_tells_time", 1, lambda t: tells_time(t or ""))


def _turn_filter_params(filters: Record) -> dict[str, Any]:
    return {
        "exclude": filters.get("exclude_session"),
        "only": filters.get("only_session"),
        "since": filters.get("since"),
        "until": filters.get("until"),
        "project": filters.get("project"),
    }


def _create_private(path: Path) -> None:
    """Create the database's directory (0700) and the file itself (0600) if
    they do not exist: they hold every session, and SQLite gives the -wal and
    -shm files it creates the database file's mode. Existing ones keep theirs
    (a file shared on purpose stays shared)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    if not path.is_file():  # /dev/null, a directory, a FIFO: SQLite's errors say little
        raise StoreUnavailableError(f"{path} is not a regular file: the database must be one")


def _writable_sidecars(path: Path) -> None:
    """Give our -wal / -shm files the database file's mode back when they
    lost write permission but the file has it: SQLite creates them with the
    file's mode, so a period with a read-only file leaves them 0444, and
    every writer after it would fail on them."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if not mode & stat.S_IWUSR:
        return  # still read-only: nothing to give back
    for suffix in ("-wal", "-shm"):
        sidecar = path.with_name(path.name + suffix)
        with suppress(OSError):
            info = os.stat(sidecar)
            if info.st_uid == os.getuid() and not info.st_mode & stat.S_IWUSR:
                os.chmod(sidecar, mode)


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers contain ';')."""
    statements, buffer = [], ""
    for line in script.strip().splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements


def _store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    message = " ".join(str(exc).split())
    if "no such table" in message:
        return StoreError(
            f"{path} has no sessions-graph schema ({message}): run `sessions-graph setup`"
        )
    if "database is locked" in message:  # SQLITE_BUSY: the busy timeout ran out
        return StoreBusyError(f"{path} is locked by another process: {message}")
    if "unable to open" in message or "readonly" in message or "disk I/O" in message:
        return StoreUnavailableError(f"cannot write {path}: {message}")
    return StoreError(f"SQLite error on {path}: {message}")
