"""The schema: the migrations that build it (``PRAGMA user_version`` counts
those applied), running them on open, the SQL functions they call, and
splitting a migration script into statements. The transaction they run in
is the engine's (engine.py)."""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from sessions_graph.errors import StoreError, StoreMigrationPendingError
from sessions_graph.index_text.told import told_window
from sessions_graph.index_text.turns import asks, only_asks, speaker, tells_time
from sessions_graph.index_text.words import has_long_word
from sessions_graph.provenance import conversation_text, origin

#: Action ids are unique per user, not globally (``engines.base.action_key``):
#: one user recording another's (computable) ids must not block theirs.
#: ``actions`` is keyed by ``action_key`` (user id, ``|``, action id) and
#: ``turn_docs`` unique on it, both rebuilt (rowids kept: they are the
#: turn index's); an action unit's ``unit_id`` in ``unit_chunks`` and
#: ``unit_hashes`` becomes its key; the delete triggers, dropped with the
#: old table, are made again on the key.
ACTION_KEYS = """
    CREATE TABLE actions_keyed (
        action_key  TEXT PRIMARY KEY,
        action_id   TEXT NOT NULL,
        session_id  TEXT NOT NULL REFERENCES sessions(session_id),
        seq         INTEGER NOT NULL,
        action_type TEXT NOT NULL,
        text        TEXT NOT NULL,
        timestamp   TEXT,
        tool_name   TEXT,
        tool_use_id TEXT,
        is_error    INTEGER NOT NULL DEFAULT 0,
        redactions  INTEGER NOT NULL DEFAULT 0,
        origin      TEXT NOT NULL DEFAULT 'conversation',
        UNIQUE (session_id, seq)
    );
    INSERT INTO actions_keyed
        SELECT s.user_id || '|' || a.action_id, a.action_id, a.session_id, a.seq, a.action_type,
               a.text, a.timestamp, a.tool_name, a.tool_use_id, a.is_error, a.redactions,
               a.origin
        FROM actions a JOIN sessions s ON s.session_id = a.session_id;
    UPDATE unit_chunks SET unit_id = (
        SELECT k.action_key FROM actions_keyed k WHERE k.action_id = unit_chunks.unit_id
    ) WHERE unit_kind = 'action' AND unit_id IN (SELECT action_id FROM actions_keyed);
    UPDATE unit_hashes SET unit_id = (
        SELECT k.action_key FROM actions_keyed k WHERE k.action_id = unit_hashes.unit_id
    ) WHERE unit_kind = 'action' AND unit_id IN (SELECT action_id FROM actions_keyed);
    CREATE TABLE turn_docs_keyed (
        rowid       INTEGER PRIMARY KEY,
        action_key  TEXT NOT NULL UNIQUE,
        action_id   TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        session_id  TEXT NOT NULL,
        action_type TEXT NOT NULL,
        timestamp   TEXT,
        speaker     TEXT,
        asks        INTEGER NOT NULL DEFAULT 0,
        tells_time  INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO turn_docs_keyed
        SELECT rowid, user_id || '|' || action_id, action_id, user_id, session_id, action_type,
               timestamp, speaker, asks, tells_time
        FROM turn_docs;
    DROP TABLE actions;
    DROP TABLE turn_docs;
    ALTER TABLE actions_keyed RENAME TO actions;
    ALTER TABLE turn_docs_keyed RENAME TO turn_docs;
    CREATE TRIGGER actions_unit_ad AFTER DELETE ON actions BEGIN
        DELETE FROM unit_chunks WHERE unit_kind = 'action' AND unit_id = old.action_key;
        DELETE FROM unit_hashes WHERE unit_kind = 'action' AND unit_id = old.action_key;
    END;
    CREATE TRIGGER actions_turn_ad AFTER DELETE ON actions BEGIN
        DELETE FROM turns_fts
        WHERE rowid = (SELECT rowid FROM turn_docs WHERE action_key = old.action_key);
        DELETE FROM turn_docs WHERE action_key = old.action_key;
    END;
"""

#: The user an action or memory unit row belongs to: an action's unit id is
#: its key (its user's id, ``|``, its id), a memory's is its id.
_UNIT_USER = """CASE {row}.unit_kind
        WHEN 'action' THEN nullif(substr({row}.unit_id, 1, instr({row}.unit_id, '|') - 1), '')
        ELSE (SELECT user_id FROM memories WHERE memory_id = {row}.unit_id) END"""

#: Each user's Share of the chunks (``user_chunks``: a chunk their own units
#: link to, ``refs`` how many of their unit rows do) and of the entities
#: (``user_entities``: an entity those chunks mention, ``refs`` how many
#: (chunk, mention) pairs), which ``status`` counts for a user. Filled from
#: what the file holds (again, should the migration run twice: the entities
#: last, whatever the triggers of a first run added), then kept by triggers:
#: on unit rows (a memory's before the memory goes, while its user can still
#: be read), on shares of chunks, and on mentions. A chunk whose last unit
#: row goes loses its share and its mentions in either order, each counted
#: off once: its mentions are gone when its share goes, or its share when
#: its mentions go.
USER_SHARES = f"""
    CREATE TABLE user_chunks (
        user_id    TEXT NOT NULL,
        chunk_hash TEXT NOT NULL,
        refs       INTEGER NOT NULL,
        PRIMARY KEY (user_id, chunk_hash)
    ) WITHOUT ROWID;
    CREATE INDEX user_chunks_by_chunk ON user_chunks(chunk_hash);
    CREATE TABLE user_entities (
        user_id   TEXT NOT NULL,
        entity_id INTEGER NOT NULL,
        refs      INTEGER NOT NULL,
        PRIMARY KEY (user_id, entity_id)
    ) WITHOUT ROWID;
    DELETE FROM user_chunks;
    INSERT INTO user_chunks(user_id, chunk_hash, refs)
        SELECT user_id, chunk_hash, count(*) FROM (
            SELECT {_UNIT_USER.format(row="uc")} AS user_id, uc.chunk_hash FROM unit_chunks uc)
        WHERE user_id IS NOT NULL GROUP BY user_id, chunk_hash;
    DELETE FROM user_entities;
    INSERT INTO user_entities(user_id, entity_id, refs)
        SELECT c.user_id, m.entity_id, count(*) FROM user_chunks c
        JOIN mentions m ON m.chunk_hash = c.chunk_hash GROUP BY c.user_id, m.entity_id;
    CREATE TRIGGER unit_chunks_share_ai AFTER INSERT ON unit_chunks
    WHEN {_UNIT_USER.format(row="new")} IS NOT NULL
    BEGIN
        INSERT INTO user_chunks(user_id, chunk_hash, refs)
        VALUES ({_UNIT_USER.format(row="new")}, new.chunk_hash, 1)
        ON CONFLICT (user_id, chunk_hash) DO UPDATE SET refs = refs + 1;
    END;
    CREATE TRIGGER unit_chunks_share_ad AFTER DELETE ON unit_chunks
    WHEN {_UNIT_USER.format(row="old")} IS NOT NULL
    BEGIN
        UPDATE user_chunks SET refs = refs - 1
        WHERE user_id = {_UNIT_USER.format(row="old")} AND chunk_hash = old.chunk_hash;
        DELETE FROM user_chunks
        WHERE user_id = {_UNIT_USER.format(row="old")} AND chunk_hash = old.chunk_hash
        AND refs <= 0;
    END;
    CREATE TRIGGER memories_share_bd BEFORE DELETE ON memories BEGIN
        UPDATE user_chunks SET refs = refs - 1
        WHERE user_id = old.user_id AND chunk_hash IN (
            SELECT chunk_hash FROM unit_chunks
            WHERE unit_kind = 'memory' AND unit_id = old.memory_id);
        DELETE FROM user_chunks
        WHERE user_id = old.user_id AND refs <= 0 AND chunk_hash IN (
            SELECT chunk_hash FROM unit_chunks
            WHERE unit_kind = 'memory' AND unit_id = old.memory_id);
    END;
    CREATE TRIGGER user_chunks_ai AFTER INSERT ON user_chunks BEGIN
        INSERT INTO user_entities(user_id, entity_id, refs)
        SELECT new.user_id, entity_id, 1 FROM mentions WHERE chunk_hash = new.chunk_hash
        ON CONFLICT (user_id, entity_id) DO UPDATE SET refs = refs + 1;
    END;
    CREATE TRIGGER user_chunks_ad AFTER DELETE ON user_chunks BEGIN
        UPDATE user_entities SET refs = refs - 1
        WHERE user_id = old.user_id
        AND entity_id IN (SELECT entity_id FROM mentions WHERE chunk_hash = old.chunk_hash);
        DELETE FROM user_entities
        WHERE user_id = old.user_id AND refs <= 0
        AND entity_id IN (SELECT entity_id FROM mentions WHERE chunk_hash = old.chunk_hash);
    END;
    CREATE TRIGGER mentions_share_ai AFTER INSERT ON mentions BEGIN
        INSERT INTO user_entities(user_id, entity_id, refs)
        SELECT user_id, new.entity_id, 1 FROM user_chunks WHERE chunk_hash = new.chunk_hash
        ON CONFLICT (user_id, entity_id) DO UPDATE SET refs = refs + 1;
    END;
    CREATE TRIGGER mentions_share_ad AFTER DELETE ON mentions BEGIN
        UPDATE user_entities SET refs = refs - 1
        WHERE entity_id = old.entity_id
        AND user_id IN (SELECT user_id FROM user_chunks WHERE chunk_hash = old.chunk_hash);
        DELETE FROM user_entities
        WHERE entity_id = old.entity_id AND refs <= 0
        AND user_id IN (SELECT user_id FROM user_chunks WHERE chunk_hash = old.chunk_hash);
    END;
"""

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
    # already indexed: ``migrate`` registers both functions for this.
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
    # 12: each action's origin (sessions_graph.provenance): conversation, or
    # derived (our own Injected Context, our MCP tools' calls and their
    # results) or client context (what the client writes into the
    # transcript), which are kept but never indexed, injected or extracted.
    # Existing actions are classified in Python (``sg_origin``), a result by
    # its call; their chunks go (and the entities only they held, by the
    # triggers of 2), and the turn documents of every session that held one,
    # or a message with an element cut out (``sg_recut``), are written again
    # by ``index_unindexed_turns`` after the migrations.
    """
    ALTER TABLE actions ADD COLUMN origin TEXT NOT NULL DEFAULT 'conversation';
    UPDATE actions SET origin = sg_origin(action_type, text, tool_name);
    UPDATE actions SET origin = 'derived'
    WHERE action_type = 'tool_result' AND origin = 'conversation' AND tool_use_id IS NOT NULL
      AND EXISTS (SELECT 1 FROM actions c WHERE c.session_id = actions.session_id
                  AND c.action_type = 'tool_call' AND c.tool_use_id = actions.tool_use_id
                  AND c.origin = 'derived');
    CREATE TEMP TABLE recut_sessions AS
        SELECT DISTINCT session_id FROM actions
        WHERE origin != 'conversation' OR sg_recut(text, action_type);
    DELETE FROM unit_chunks WHERE unit_kind = 'action'
      AND unit_id IN (SELECT action_id FROM actions WHERE origin != 'conversation');
    DELETE FROM unit_hashes WHERE unit_kind = 'action'
      AND unit_id IN (SELECT action_id FROM actions WHERE origin != 'conversation');
    DELETE FROM turns_fts WHERE rowid IN (
        SELECT rowid FROM turn_docs WHERE session_id IN (SELECT session_id FROM recut_sessions));
    DELETE FROM turn_docs WHERE session_id IN (SELECT session_id FROM recut_sessions);
    UPDATE sessions SET content_version = content_version + 1,
        reconciliation_status = CASE WHEN reconciliation_status IN ('reconciled', 'failed')
                                     THEN 'pending' ELSE reconciliation_status END
    WHERE session_id IN (SELECT session_id FROM recut_sessions);
    DROP TABLE recut_sessions;
    """,
    # 13: the injection ledger: one row per time the hook handed context to
    # the agent, with the ids of the items it held (a JSON array) and its
    # estimated tokens. The hook reads a session's rows at every prompt, on
    # the (user_id, session_id) index; status sums a user's by time.
    """
    CREATE TABLE injections (
        rowid        INTEGER PRIMARY KEY,
        injection_id TEXT NOT NULL UNIQUE,
        user_id      TEXT NOT NULL,
        session_id   TEXT NOT NULL,
        event        TEXT NOT NULL,
        injected_at  TEXT NOT NULL,
        item_ids     TEXT NOT NULL,
        tokens       INTEGER NOT NULL
    );
    CREATE INDEX injections_by_session ON injections(user_id, session_id);
    CREATE INDEX injections_by_time ON injections(user_id, injected_at);
    """,
    # 14: the project each memory was saved in (its session's, when it has
    # one): SessionStart shows this project's memories and those of none.
    """
    ALTER TABLE memories ADD COLUMN project_key TEXT;
    UPDATE memories SET project_key = (
        SELECT s.project_key FROM sessions s WHERE s.session_id = memories.session_id
    ) WHERE session_id IS NOT NULL;
    CREATE INDEX memories_by_project ON memories(user_id, project_key, created_at DESC);
    """,
    # 15: session digests (sessions_graph.digest), one per session, going
    # with it. ``body`` is the digest's JSON; ``action_count`` the session's
    # when it was built (an older one is stale); ``input_hash`` what an LLM
    # digest was written from (the same input is never sent twice).
    """
    CREATE TABLE session_digests (
        session_id   TEXT PRIMARY KEY REFERENCES sessions(session_id) ON DELETE CASCADE,
        user_id      TEXT NOT NULL,
        source       TEXT NOT NULL,
        substance    INTEGER NOT NULL,
        body         TEXT NOT NULL,
        action_count INTEGER NOT NULL,
        input_hash   TEXT,
        built_at     TEXT NOT NULL
    );
    """,
    # 16: long words are cut into pieces of at most 39 UTF-8 bytes (Tantivy's
    # limit) where they were cut into 40 characters: a question's pieces no
    # longer match the documents cut before. The documents of every session
    # with such a word (sg_has_long_word, index_text.words) go, and
    # ``migrate`` indexes those sessions again after the migrations.
    """
    DELETE FROM turns_fts WHERE rowid IN (
        SELECT d.rowid FROM turn_docs d WHERE d.session_id IN (
            SELECT DISTINCT session_id FROM actions WHERE sg_has_long_word(text)));
    DELETE FROM turn_docs WHERE session_id IN (
        SELECT DISTINCT session_id FROM actions WHERE sg_has_long_word(text));
    """,
    # 17: interactions (the short-term cache of a session's exchanges: the
    # question, the context given with it as JSON, the answer, the rating;
    # ``items`` / ``used`` count its context items and those the answer
    # used) and the per-user feedback weights their ratings teach, which
    # outlive them. Neither references sessions: an application may recall
    # with a session id it never recorded.
    """
    CREATE TABLE interactions (
        interaction_id TEXT PRIMARY KEY,
        user_id        TEXT NOT NULL,
        session_id     TEXT NOT NULL,
        source         TEXT NOT NULL,
        created_at     TEXT NOT NULL,
        expires_at     TEXT,
        question       TEXT NOT NULL,
        context        TEXT NOT NULL,
        answer         TEXT,
        answered_at    TEXT,
        feedback       INTEGER,
        rated_at       TEXT,
        seq_from       INTEGER,
        items          INTEGER NOT NULL DEFAULT 0,
        used           INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX interactions_by_session ON interactions(user_id, session_id, created_at DESC);
    CREATE INDEX interactions_by_user ON interactions(user_id, created_at DESC);
    CREATE INDEX interactions_by_expiry ON interactions(expires_at)
        WHERE expires_at IS NOT NULL;
    CREATE TABLE feedback_weights (
        user_id     TEXT NOT NULL,
        element_key TEXT NOT NULL,
        weight      REAL NOT NULL,
        ratings     INTEGER NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (user_id, element_key)
    ) WITHOUT ROWID;
    """,
    # 18: action ids unique per user (ACTION_KEYS, above).
    ACTION_KEYS,
    # 19: a user's share of the chunks and entities, kept as rows come and go
    # so that ``status`` counts them without reading every chunk row of the
    # user (USER_SHARES, below).
    USER_SHARES,
    # 20: whether each Asking Turn only asks (index_text.turns.only_asks),
    # read by recall's weights; computed in Python like 10, from the text the
    # documents are written from (the conversation text).
    """
    ALTER TABLE turn_docs ADD COLUMN only_asks INTEGER NOT NULL DEFAULT 0;
    UPDATE turn_docs SET only_asks = coalesce((
        SELECT sg_only_asks(a.text, a.action_type) FROM actions a
        WHERE a.action_key = turn_docs.action_key
    ), 0) WHERE asks = 1;
    """,
    # 21: each turn's Told Time (index_text.told.told_window), which recall's
    # dates lane matches a question's window against as well as the time the
    # turn was said; computed in Python like 10 (``told_window`` skips a text
    # without a cue's words at the cost of a substring test).
    """
    ALTER TABLE turn_docs ADD COLUMN told_since TEXT;
    ALTER TABLE turn_docs ADD COLUMN told_until TEXT;
    UPDATE turn_docs SET (told_since, told_until) = (
        SELECT sg_told_since(a.text, a.action_type, coalesce(a.timestamp, s.started_at)),
               sg_told_until(a.text, a.action_type, coalesce(a.timestamp, s.started_at))
        FROM actions a JOIN sessions s ON s.session_id = a.session_id
        WHERE a.action_key = turn_docs.action_key
    );
    """,
]


SCHEMA_VERSION = len(MIGRATIONS)

#: Migrations whose effect a statement-level check cannot see, with a query
#: that returns a row when the file already has it. 6 copies marks into a
#: table keyed by extractor: a file whose marks are already keyed so must
#: not be copied again. ACTION_KEYS rebuilds tables under new names and
#: renames them back: a file whose actions are keyed is not rebuilt again.
_APPLIED_WHEN = {
    6: "SELECT 1 FROM pragma_table_info('chunk_extractions') WHERE name = 'extractor'",
    MIGRATIONS.index(ACTION_KEYS) + 1: (
        "SELECT 1 FROM pragma_table_info('actions') WHERE name = 'action_key'"
    ),
}
#: A statement that creates a named object, and one that adds a column.
#: Sources, compiled by ``re`` when a migration first needs them: every
#: hook process imports this module, and almost none migrates.
_CREATES = r"(?i)CREATE\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)"
_ADDS_COLUMN = r"(?i)ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)"


def migrate(
    conn: sqlite3.Connection,
    path: Path,
    write: Callable[[], AbstractContextManager[sqlite3.Connection]],
    index_unindexed_turns: Callable[[sqlite3.Connection], None],
    *,
    existing: bool = True,
) -> None:
    """Bring the file at ``path`` forward to ``SCHEMA_VERSION``, in one
    ``write`` transaction (the engine's, taken with the write lock, so
    concurrent openers migrate once); ``index_unindexed_turns`` indexes, in
    that transaction, the actions stored before the turn index existed.

    ``existing=False`` migrates only a new, empty file (creating the schema
    costs milliseconds) and raises ``StoreMigrationPendingError`` for a file
    that holds an older schema: migrating one re-indexes every action, 40 s
    at 300,000, which a hook must leave to a detached process."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return  # the common case, and all a hook process pays
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this"
            f" sessions-graph understands ({SCHEMA_VERSION}): upgrade sessions-graph"
        )
    if not existing and (version or conn.execute("SELECT 1 FROM sqlite_master").fetchone()):
        raise StoreMigrationPendingError(
            f"{path} has schema version {version}, older than this sessions-graph's"
            f" ({SCHEMA_VERSION}): left to a background migration (or `sessions-graph setup`)"
        )
    # journal_mode is persistent in the file, so it is set once here.
    conn.execute("PRAGMA journal_mode = WAL")
    _add_recall_functions(conn)
    _add_origin_functions(conn)
    with write() as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        # Every migration is checked against what the file holds, those the
        # version counts as applied too: builds between releases numbered
        # some differently (one made memory files its 4th), so a file at
        # version 4 may lack the 4th migration here and hold the 9th. What a
        # migration creates is created if missing; its other statements run
        # when it is past the version or something of it was missing.
        for number, migration in enumerate(MIGRATIONS):
            check = _APPLIED_WHEN.get(number + 1)
            if check is not None and conn.execute(check).fetchone() is not None:
                continue
            statements = [(s, _exists_already(conn, s)) for s in _statements(migration)]
            missing = [s for s, there in statements if there is False]
            if number < version and not missing:
                continue  # applied, as its number says
            # Whether an object exists is asked again just before its
            # statement: a migration that drops a table (and its triggers)
            # makes them again under their old names.
            for statement, there in statements:
                if not there or not _exists_already(conn, statement):
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        # Actions stored before the turn index existed are indexed
        # now, in the migrating transaction (a no-op on a new file).
        index_unindexed_turns(conn)


def _exists_already(conn: sqlite3.Connection, statement: str) -> bool | None:
    """Whether what ``statement`` creates (a table, index or trigger, or a
    column) is in the file already; None for a statement that creates
    nothing (it moves or computes data)."""
    if created := re.match(_CREATES, statement):
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (created.group(1),)
        ).fetchone()
        return found is not None
    if added := re.match(_ADDS_COLUMN, statement):
        table, column = added.groups()
        found = conn.execute(
            "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)
        ).fetchone()
        return found is not None
    return None


def _add_recall_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migrations call to compute, for turns indexed
    before, what recall weighs them by: one definition, in index_text.turns."""
    conn.create_function("sg_speaker", 1, lambda t: speaker(t or ""))
    conn.create_function("sg_asks", 1, lambda t: asks(t or ""))
    conn.create_function(
        "sg_only_asks", 2, lambda t, kind: only_asks(conversation_text(t or "", kind or ""))
    )
    conn.create_function("sg_tells_time", 1, lambda t: tells_time(t or ""))
    # A turn's Told Time, read once for both its ends: SQLite asks for the
    # second with the same row, which the cache of one still holds.
    told = functools.lru_cache(maxsize=1)(
        lambda t, kind, said: told_window(conversation_text(t or "", kind or ""), said)
    )
    conn.create_function("sg_told_since", 3, lambda *row: (told(*row) or (None, None))[0])
    conn.create_function("sg_told_until", 3, lambda *row: (told(*row) or (None, None))[1])
    conn.create_function("sg_has_long_word", 1, lambda t: has_long_word(t or ""))


def _add_origin_functions(conn: sqlite3.Connection) -> None:
    """The SQL functions migration 12 classifies stored actions with: the
    same rules the capture paths apply (``provenance``)."""
    conn.create_function(
        "sg_origin", 3, lambda kind, text, tool: origin(kind or "", text or "", tool)
    )
    conn.create_function(
        "sg_recut",
        2,
        lambda text, kind: int(conversation_text(text or "", kind or "") != (text or "")),
    )


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers contain ';')."""
    statements, buffer = [], ""
    for line in script.strip().splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements
