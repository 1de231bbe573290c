"""``SessionsGraph``: the one entry point. Validates, stamps, delegates.

The façade owns every rule that must hold on both engines (id patterns, size
limits, query syntax, timestamps); engines only store and fetch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sessions_graph.clock import parse_timestamp, utcnow
from sessions_graph.engines.base import ACTION_TYPES, ActionsAdded, Engine, ImportCursor
from sessions_graph.errors import ConfigError, MemoryFileError, MemoryValidationError
from sessions_graph.memory_paths import (
    KEEP_VERSIONS,
    ROOT,
    check_file_text,
    conflict_message,
    normalize_path,
    parents,
)
from sessions_graph.provenance import ORIGINS
from sessions_graph.records import plain as plain_record
from sessions_graph.redact import redact_counted
from sessions_graph.settings import Settings, load_settings
from sessions_graph.validation import (
    EXTRACTOR_CHOICES,
    MAX_CONCURRENCY,
    MAX_LEASE_SECONDS,
    MIN_LEASE_SECONDS,
    check_content,
    check_id,
    check_limit,
    check_optional_id,
    check_workspace,
    without_surrogates,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from sessions_graph.models import (
        Action,
        EntityMention,
        Interaction,
        Memory,
        RecallResult,
        Session,
    )
    from sessions_graph.reconcile.extraction import LLMFunc
    from sessions_graph.reconcile.summary import ReconciliationSummary

#: Largest text stored on one Action, in characters; longer text is cut.
MAX_ACTION_CHARS = 200_000
#: How far past that cut redaction reads, so that the cut cannot leave the
#: head of a secret whose tail no rule then sees.
_REDACTION_MARGIN = 4096
#: A session's latest interactions read to join the injection ledger's rows
#: to the prompts they were injected for (a prompt injects once at most).
_JOINED_INTERACTIONS = 1000


def _models() -> Any:
    # pydantic costs ~80 ms to import; hooks only write, so they never pay it.
    from sessions_graph import models

    return models


def _records(model: str, rows: Iterable[Mapping[str, Any]], plain: bool) -> list[Any]:
    """``rows`` as ``models.<model>`` records, or with ``plain`` as the dicts
    their ``model_dump()`` gives (``sessions_graph.records``): the CLI's
    read commands take those, and never load pydantic."""
    if plain:
        return [plain_record(model, r) for r in rows]
    return [getattr(_models(), model)(**r) for r in rows]


def open_engine(
    settings: Settings, *, fail_fast: bool = False, wait_budget: float | None = None
) -> Engine:
    """The engine the settings name: Memgraph if configured, else embedded.

    ``fail_fast`` is for hooks: a Memgraph server that is down is reported
    after a short try (the hook then spools the event) instead of after the
    full retry budget a batch job can afford. ``wait_budget`` (seconds), also
    for hooks: an embedded file locked by other processes is waited for that
    long in all, not for the busy timeout of each write. And a hook's embedded
    file keeps its WAL for the next hook process instead of having each one
    checkpoint and delete it, and is not migrated if its schema is older
    (``StoreMigrationPendingError``: the hook spools, a detached replay migrates).
    """
    if settings.engine_name == "memgraph":
        from sessions_graph.engines.memgraph import MemgraphEngine

        limits = {"max_attempts": 2, "connection_timeout": 2.0} if fail_fast else {}
        return MemgraphEngine(
            settings.memgraph_uri,
            user=settings.memgraph_user,
            password=settings.memgraph_password,
            database=settings.memgraph_database or None,
            workspaces=(settings.entity_workspace,),
            **limits,
        )
    if settings.engine_name != "embedded":
        raise ConfigError(f"unknown engine {settings.engine_name!r}: use 'embedded' or 'memgraph'")
    from sessions_graph.engines.sqlite import SQLiteEngine

    return SQLiteEngine(
        settings.db,
        wait_budget=wait_budget,
        checkpoint_on_close=not fail_fast,
        migrate_existing=not fail_fast,
    )


class SessionsGraph:
    """Cross-session memory for agents.

    >>> graph = SessionsGraph()          # engine from the environment / config
    >>> graph.setup()
    >>> graph.save_memory(user_id="alice", content="Prefers Python")

    Pass ``engine=`` to use a specific engine, or ``settings=`` / keyword
    settings (``db=...``, ``memgraph_url=...``) to choose one.
    """

    def __init__(
        self, *, engine: Engine | None = None, settings: Settings | None = None, **overrides: Any
    ) -> None:
        self.settings = settings or load_settings(**overrides)
        self.engine = engine or open_engine(self.settings)

    def __enter__(self) -> SessionsGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- lifecycle ---------------------------------------------------------
    def setup(self) -> None:
        """Create the schema; safe to call any number of times."""
        self.engine.setup()

    def drop(self) -> None:
        """Remove what ``setup`` created."""
        self.engine.drop()

    def close(self) -> None:
        self.engine.close()

    def status(self, user_id: str | None = None) -> dict[str, Any]:
        """Engine, location, schema version and counts: of the whole store, or
        with ``user_id`` of that user's data only (sessions, actions, memories,
        and the chunks and entities of their own text), with ``injected``: the
        tokens of context injected today (UTC) and per session
        (``injection_stats``)."""
        if user_id is not None:
            check_id(user_id, "user_id")
        info = self.engine.status(user_id)
        if user_id is not None:
            info["user_id"] = user_id
            if info["counts"]:  # the schema is current
                # Context handed to the user's agents: today's (UTC) and per session.
                today = utcnow()[:10] + "T00:00:00Z"
                info["injected"] = self.injection_stats(user_id, today)
                info["interactions"] = self.interaction_usage(user_id)
        return info

    # -- memories ----------------------------------------------------------
    def save_memory(
        self,
        user_id: str,
        content: str,
        session_id: str | None = None,
        *,
        memory_id: str | None = None,
        path: str | None = None,
        project_key: str | None = None,
    ) -> Memory:
        """Store a new memory for ``user_id`` (linked to ``session_id`` if
        given). It records its project: ``project_key`` if given, else its
        session's; a memory with neither belongs to no project and is shown
        in every one.

        ``memory_id``: the id to store it under (tests and imports choose
        theirs), else a new UUID; one already in use raises
        ``MemoryIdTakenError`` and writes nothing. ``path``: the memory is
        the user's Memory File at that path under ``/memories`` (as the
        memory tool's ``create``), at version 1; a path taken (or a
        directory, or under a file) raises ``MemoryFileError``."""
        check_id(user_id, "user_id")
        check_optional_id(session_id, "session_id")
        check_optional_id(memory_id, "memory_id")
        _check_project_key(project_key)
        if path is not None:
            path = normalize_path(path)
            if path == ROOT:
                raise MemoryFileError(f"{ROOT} is the memory directory, not a file")
            check_file_text(content, path)
        else:
            check_content(content)
        import uuid  # off the hook path, which never saves a memory

        now = utcnow()
        row = {
            "memory_id": memory_id or str(uuid.uuid4()),
            "user_id": user_id,
            "content": content,
            "session_id": session_id,
            "created_at": now,
            "updated_at": now,
            "project_key": _valid_utf8(project_key),
        }
        if path is None:
            self.engine.save_memory(row)
        else:
            outcome = self.engine.create_memory_file(row, path, parents(path), KEEP_VERSIONS)
            if outcome != "created":
                raise MemoryFileError(conflict_message(outcome, path))
        if row["project_key"] is None and session_id is not None:
            stored = self.engine.get_memory(row["memory_id"])
            row["project_key"] = stored["project_key"] if stored else None
        return _models().Memory(**row)

    def get_memory(self, memory_id: str, user_id: str | None = None) -> Memory | None:
        check_id(memory_id, "memory_id")
        check_optional_id(user_id, "user_id")
        row = self.engine.get_memory(memory_id, user_id)
        return _models().Memory(**row) if row else None

    def get_memories(
        self, user_id: str, limit: int = 100, *, plain: bool = False
    ) -> list[Memory] | list[dict[str, Any]]:
        """A user's memories, newest first (``plain``: dicts, see ``_records``)."""
        check_id(user_id, "user_id")
        rows = self.engine.list_memories(user_id, check_limit(limit))
        return _records("Memory", rows, plain)

    def get_memories_for_session(
        self, session_id: str, limit: int = 100, *, plain: bool = False
    ) -> list[Memory] | list[dict[str, Any]]:
        """The memories a session produced, newest first (``plain``: dicts)."""
        check_id(session_id, "session_id")
        rows = self.engine.list_session_memories(session_id, check_limit(limit))
        return _records("Memory", rows, plain)

    def search_memories(
        self, user_id: str, query: str, limit: int = 10, *, plain: bool = False
    ) -> list[Memory] | list[dict[str, Any]]:
        """Full-text search of one user's memories, most relevant first
        (``plain``: dicts, see ``_records``).

        ``query`` uses Tantivy's syntax (words, "phrases", AND / OR / NOT,
        parentheses, ``prefix*``); anything else raises ``InvalidQueryError``.
        """
        from sessions_graph import query as query_lang  # hooks that only capture never search

        check_id(user_id, "user_id")
        parsed = query_lang.parse(query)
        rows = self.engine.search_memories(user_id, parsed, check_limit(limit))
        return _records("Memory", rows, plain)

    def update_memory(
        self, memory_id: str, content: str, *, user_id: str | None = None
    ) -> Memory | None:
        """Replace a memory's content; None if not found (or not ``user_id``'s)."""
        check_id(memory_id, "memory_id")
        check_content(content)
        check_optional_id(user_id, "user_id")
        row = self.engine.update_memory(memory_id, content, utcnow(), user_id)
        return _models().Memory(**row) if row else None

    def delete_memory(self, memory_id: str, *, user_id: str | None = None) -> bool:
        """Delete a memory; False if not found (or not ``user_id``'s)."""
        check_id(memory_id, "memory_id")
        check_optional_id(user_id, "user_id")
        return self.engine.delete_memory(memory_id, user_id)

    # -- sessions and actions ----------------------------------------------
    def record_session_start(
        self,
        session_id: str,
        *,
        user_id: str,
        cwd: str | None = None,
        project_key: str | None = None,
        started_at: str | datetime | None = None,
    ) -> None:
        """MERGE the user and the session (idempotent).

        ``started_at`` (ISO 8601 text or a datetime; naive means UTC) dates a
        session loaded from history; by default it is now. A session keeps the
        earliest start it was given, so importing history after hooks saw the
        session (or the other way round) dates it by its real beginning.
        """
        check_id(session_id, "session_id")
        check_id(user_id, "user_id")
        for name, value in (("cwd", cwd), ("project_key", project_key)):
            if value is not None and (not isinstance(value, str) or len(value) > 4096):
                raise MemoryValidationError(f"{name} must be a string of at most 4096 characters")
        start = utcnow() if started_at is None else _start_time(started_at)
        self.engine.start_session(
            session_id, user_id, start, _valid_utf8(cwd), _valid_utf8(project_key)
        )

    def record_actions(
        self, session_id: str, actions: Iterable[Mapping[str, Any]], *, user_id: str | None = None
    ) -> int:
        """Append a batch of actions in one transaction; returns how many were new.

        Each action is a mapping with ``action_id`` and ``action_type`` (one of
        ``ACTION_TYPES``) and optionally ``text``, ``timestamp``, ``tool_name``,
        ``tool_use_id``, ``is_error``. The text is stored redacted (secrets
        become ``[REDACTED:kind]``) and cut to ``MAX_ACTION_CHARS``; the
        action's ``redactions`` counts the secrets that went. Action ids are
        the user's own: another user's never hold one back. An ``action_id``
        the user already recorded is skipped: in this session (a
        redelivery), or in another of theirs (an action belongs to the
        session that recorded it first; a resumed or forked agent session
        repeats earlier entries). ``record_actions_report`` also
        counts the latter. ``user_id``, when given, must own the session;
        without it, a known session's owner is used, and an unknown session is
        created for the configured user.
        """
        return self.record_actions_report(session_id, actions, user_id=user_id).added

    def record_actions_report(
        self, session_id: str, actions: Iterable[Mapping[str, Any]], *, user_id: str | None = None
    ) -> ActionsAdded:
        """``record_actions``, also saying how many actions were skipped because
        another session recorded them first (``foreign``)."""
        check_id(session_id, "session_id")
        rows = [_action_row(a) for a in actions]
        if user_id is None:
            known = self.engine.get_session(session_id)
            user_id = known["user_id"] if known else self.settings.user_id
        check_id(user_id, "user_id")
        if not rows:
            return ActionsAdded(0, 0)
        return self.engine.add_actions(session_id, user_id, rows)

    def record_session_end(self, session_id: str) -> bool:
        """Mark the session ended and pending reconciliation. Fast: no LLM here."""
        check_id(session_id, "session_id")
        return self.engine.end_session(session_id, utcnow())

    def mark_pending(self, session_id: str) -> bool:
        """Queue the session for reconciliation (e.g. at the end of a turn)."""
        check_id(session_id, "session_id")
        return self.engine.mark_pending(session_id)

    def pending_sessions(
        self, limit: int = 100, *, include_failed: bool = False, plain: bool = False
    ) -> list[Session] | list[dict[str, Any]]:
        """Sessions waiting for reconciliation, oldest first (``plain``: dicts)."""
        rows = self.engine.pending_sessions(check_limit(limit), include_failed)
        return _records("Session", rows, plain)

    def get_session(
        self, session_id: str, *, plain: bool = False
    ) -> Session | dict[str, Any] | None:
        """The session, or None (``plain``: a dict, see ``_records``)."""
        check_id(session_id, "session_id")
        row = self.engine.get_session(session_id)
        return _records("Session", [row], plain)[0] if row else None

    def session_owner(self, session_id: str) -> str | None:
        """The user_id a session belongs to, or None if it is unknown (cheap:
        no model is built, so hooks can ask on every event)."""
        check_id(session_id, "session_id")
        row = self.engine.get_session(session_id)
        return row["user_id"] if row else None

    def get_actions(self, session_id: str) -> list[Action]:
        """A session's actions, in the order they happened."""
        check_id(session_id, "session_id")
        return [_models().Action(**r) for r in self.engine.get_actions(session_id)]

    def import_cursor(self, session_id: str, source: str) -> int:
        """How far (bytes) the transcript ``source`` of a session was imported."""
        check_id(session_id, "session_id")
        cursor = self.engine.get_import_cursor(session_id)
        return cursor.offset if cursor and cursor.source == _check_source(source) else 0

    def import_cursor_state(self, session_id: str) -> ImportCursor | None:
        """The session's import cursor (source, offset, fingerprint), or None."""
        check_id(session_id, "session_id")
        return self.engine.get_import_cursor(session_id)

    def set_import_cursor(
        self, session_id: str, source: str, offset: int, fingerprint: str | None = None
    ) -> None:
        """Remember how far a session's transcript was imported, with the
        fingerprint of the prefix read (see ``hooks.transcript.fingerprint``)."""
        check_id(session_id, "session_id")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise MemoryValidationError("an import cursor is a byte offset >= 0")
        if fingerprint is not None and (not isinstance(fingerprint, str) or len(fingerprint) > 64):
            raise MemoryValidationError("an import fingerprint is a string of <= 64 characters")
        self.engine.set_import_cursor(session_id, _check_source(source), offset, fingerprint)

    # -- where the user left off ------------------------------------------------
    def recent_sessions(
        self,
        user_id: str,
        *,
        project_key: str | None = None,
        limit: int = 5,
        before: str | None = None,
        preview_chars: int = 500,
    ) -> list[dict[str, Any]]:
        """The user's sessions, newest first, each with its first request and
        last answer cut to ``preview_chars`` characters (see
        ``Engine.recent_sessions`` for the fields). ``project_key`` keeps one
        project's; ``before`` (an ISO 8601 time) pages back in time. Plain
        dicts, not models: the SessionStart hook reads this on every new
        session and must not load pydantic."""
        check_id(user_id, "user_id")
        if project_key is not None and (
            not isinstance(project_key, str) or not project_key or len(project_key) > 4096
        ):
            raise MemoryValidationError("project_key must be a string of 1-4096 characters")
        moment = None
        if before is not None:
            moment = parse_timestamp(before) if isinstance(before, str) else None
            if moment is None:
                raise MemoryValidationError(f"before must be an ISO 8601 time, got {before!r}")
        if (
            isinstance(preview_chars, bool)
            or not isinstance(preview_chars, int)
            or not 1 <= preview_chars <= MAX_ACTION_CHARS
        ):
            raise MemoryValidationError(
                f"preview_chars must be an integer from 1 to {MAX_ACTION_CHARS}"
            )
        return self.engine.recent_sessions(
            user_id, _valid_utf8(project_key), check_limit(limit), moment, preview_chars
        )

    # -- reading a session back (the sessions commands and the viewer) ---------
    def session_actions(
        self, session_id: str, offset: int = 0, limit: int = 200, *, plain: bool = False
    ) -> list[Action] | list[dict[str, Any]]:
        """A page of a session's actions in order, from position ``offset``:
        a long session is shown a page at a time instead of read whole
        (``plain``: dicts, see ``_records``)."""
        check_id(session_id, "session_id")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise MemoryValidationError("offset must be an integer >= 0")
        rows = self.engine.get_actions_page(session_id, offset, check_limit(limit))
        return _records("Action", rows, plain)

    def session_exchanges(self, session_id: str) -> int:
        """How many exchanges (requests of the user, each with what followed)
        a session has: its ``user_message`` actions, counted a page at a time."""
        check_id(session_id, "session_id")
        count, offset, page = 0, 0, 2000
        while True:
            rows = self.engine.get_actions_page(session_id, offset, page)
            count += sum(r["action_type"] == "user_message" for r in rows)
            if len(rows) < page:
                return count
            offset += page

    def session_client(self, session_id: str) -> str | None:
        """Which agent runtime recorded a session, told by the transcript it
        is imported from: ``codex`` (a rollout file), ``claude-code`` (a
        ``.jsonl`` transcript), or None when no transcript was named."""
        cursor = self.import_cursor_state(session_id)
        if cursor is None:
            return None
        from sessions_graph.provenance import transcript_client

        return transcript_client(cursor.source)

    def adopt_legacy_project(
        self, user_id: str, legacy_key: str, root: str, project_key: str
    ) -> int:
        """Move the user's sessions recorded under a project's old key (its
        base name) whose working directory is under ``root`` to its full
        ``project_key``, with their memories; returns how many sessions
        moved. The SessionStart hook calls it for the project it starts in,
        so stores written before full keys keep their history, and another
        project of the same name keeps its own (see ``sessions_graph.project``)."""
        check_id(user_id, "user_id")
        for value in (legacy_key, root, project_key):
            _check_project_key(value)
        return self.engine.adopt_legacy_project(
            user_id, _valid_utf8(legacy_key), _valid_utf8(root), _valid_utf8(project_key)
        )

    # -- digests ----------------------------------------------------------------
    def session_digest(
        self, session_id: str, *, user_id: str | None = None
    ) -> dict[str, Any] | None:
        """The session's digest (``sessions_graph.digest``), or None when it has
        none (or, with ``user_id``, is not that user's): ``session_id``,
        ``source`` ("offline" or "llm"), ``substance``, ``built_at``,
        ``stale`` (the session has had actions since), the body's fields
        (``goal``, ``files``, ``commands``, ``tests``, ``decisions``,
        ``open``, and ``done`` for an LLM's) and ``text``, all of it on one line."""
        from sessions_graph.digest import render

        check_id(session_id, "session_id")
        check_optional_id(user_id, "user_id")
        row = self.engine.get_digest(session_id)
        if row is None or (user_id is not None and row["user_id"] != user_id):
            return None
        session = self.engine.get_session(session_id)
        return {
            "session_id": session_id,
            "source": row["source"],
            "substance": row["substance"],
            "built_at": row["built_at"],
            "stale": bool(session and session["action_count"] > row["action_count"]),
            **row["body"],
            "text": render(row["body"]),
        }

    def build_digest(self, session_id: str) -> bool:
        """Build the session's digest offline, from its actions, and store it
        (an LLM's digest of the same content is kept); False if the session
        is unknown or kept its LLM digest. Cheap enough for a hook: no LLM,
        one read of the actions."""
        from sessions_graph.digest import OFFLINE, build

        check_id(session_id, "session_id")
        session = self.engine.get_session(session_id)
        if session is None:
            return False
        actions = self.engine.get_actions(session_id)
        body = build(actions, session.get("cwd"))
        return self.engine.save_digest(
            {
                "session_id": session_id,
                "user_id": session["user_id"],
                "source": OFFLINE,
                "substance": body.pop("substance"),
                "body": body,
                "action_count": len(actions),
                "input_hash": None,
                "built_at": utcnow(),
            }
        )

    def session_entities(
        self, session_id: str, *, plain: bool = False
    ) -> list[EntityMention] | list[dict[str, Any]]:
        """Entities mentioned in a session, as this session mentions them: the
        type is the first its chunks gave, the description joins its chunks'
        distinct descriptions (in chunk-hash order), ``mentions`` counts them
        (``plain``: dicts, see ``_records``)."""
        check_id(session_id, "session_id")
        rows = sorted(
            self.engine.session_mentions(session_id),
            key=lambda r: (r["name"], r["workspace"], r["chunk_hash"]),
        )
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in rows:
            grouped.setdefault((row["name"], row["workspace"]), []).append(row)
        entities = []
        for (name, workspace), mentions in grouped.items():
            descriptions = dict.fromkeys(m["description"] for m in mentions if m["description"])
            entity_type = next((m["entity_type"] for m in mentions if m["entity_type"]), None)
            entities.append(
                {
                    "name": name,
                    "workspace": workspace,
                    "entity_type": entity_type,
                    "description": "\n".join(descriptions) or None,
                    "mentions": len(mentions),
                }
            )
        return _records("EntityMention", entities, plain)

    def entity_sessions(
        self, name: str, *, user_id: str, plain: bool = False
    ) -> list[Session] | list[dict[str, Any]]:
        """Which of this user's sessions mention an entity: cross-session
        recall (``plain``: dicts, see ``_records``)."""
        check_id(user_id, "user_id")
        if not isinstance(name, str) or not name.strip() or len(name) > 500:
            raise MemoryValidationError("entity name must be a non-empty string (<= 500 chars)")
        name = without_surrogates(name)
        return _records("Session", self.engine.entity_sessions(name.strip(), user_id), plain)

    def user_entity_mentions(
        self, user_id: str, session_ids: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The entities the given sessions of this user mention, in one read
        (the viewer's Entities page): one plain record per (``session_id``,
        ``name``) with ``entity_type`` and ``mentions``, summed over
        workspaces; another user's session gives nothing."""
        check_id(user_id, "user_id")
        ids = list(session_ids)
        for session_id in ids:
            check_id(session_id, "session_id")
        return self.engine.user_entity_mentions(user_id, ids) if ids else []

    # -- recall --------------------------------------------------------------
    def recall(
        self,
        user_id: str,
        query: str | None = None,
        *,
        question: str | None = None,
        limit: int = 10,
        session_id: str | None = None,
        scope: str | Sequence[str] = "auto",
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        project: str | None = None,
        source: str = "recall",
    ) -> RecallResult:
        """A user's past turns, memories and entities for a free-text question,
        best first (``sessions_graph.recall`` does the work).

        ``query`` is searched as words, never as query syntax. ``scope``:
        "auto" (the default), "all", "turns", "memories", "entities",
        "interactions", or a list of them; the asking ``session_id``'s own
        turns are left out unless the scope also names "session" (which
        alone means: only them). "auto" is session-first: with a
        ``session_id``, that session's interactions that match the question
        come first, then what "all" finds. ``since`` / ``until`` (datetime or
        ISO 8601) bound when things happened; ``project`` is a project key or
        a working directory (its subdirectories included).

        The user's feedback weights bend the ranking by the
        ``feedback_influence`` setting. With a ``session_id`` the recall is
        recorded as an Interaction (its ``interaction_id`` is on the result;
        ``source`` says who asked: "recall" or "mcp"), which
        ``record_answer`` and ``feedback`` take.
        ``question`` is ``query`` by the name Memgraph's sessions-graph gives
        it: one of the two, not both.
        """
        from sessions_graph.recall.core import recall

        text = query if question is None else question
        if text is None or (query is not None and question is not None):
            raise MemoryValidationError("recall takes a query (or question), and only one")
        result = recall(
            self.engine,
            user_id,
            text,
            limit=limit,
            session_id=session_id,
            scope=scope,
            since=since,
            until=until,
            project=project,
            feedback_influence=self.settings.feedback_influence,
        )
        if session_id is not None:
            result["interaction_id"] = self.record_interaction(
                user_id, session_id, query, result["hits"], source=source
            )
        return _models().RecallResult(**result)

    # -- the injection ledger ------------------------------------------------
    def record_injection(
        self,
        user_id: str,
        session_id: str,
        event: str,
        item_ids: Sequence[str],
        tokens: int,
    ) -> dict[str, Any]:
        """Note in the ledger that context holding ``item_ids`` (``turn:<id>``,
        ``memory:<id>``), about ``tokens`` tokens, was handed to ``user_id``'s
        agent in ``session_id`` at ``event``; returns the row stored. The hook
        writes one per injection, and injects nothing already noted for the
        session (``injected_items``)."""
        if not isinstance(event, str) or not 1 <= len(event) <= 64:
            raise MemoryValidationError("event must be a string of 1-64 characters")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise MemoryValidationError("tokens must be an integer >= 0")
        if isinstance(item_ids, str) or not all(
            isinstance(i, str) and 0 < len(i) <= 600 for i in item_ids
        ):
            raise MemoryValidationError("item_ids must be a list of non-empty strings")
        row = {
            # As an interaction's id: ``uuid`` would cost the hook ~3 ms of imports.
            "injection_id": os.urandom(16).hex(),
            "user_id": check_id(user_id, "user_id"),
            "session_id": check_id(session_id, "session_id"),
            "event": event,
            "injected_at": utcnow(),
            "item_ids": list(dict.fromkeys(item_ids)),
            "tokens": tokens,
        }
        self.engine.record_injection(row)
        return row

    def injected_items(self, user_id: str, session_id: str) -> set[str]:
        """The ids of the items already injected into this session of the user."""
        return self.engine.injected_items(
            check_id(user_id, "user_id"), check_id(session_id, "session_id")
        )

    def injections(
        self, user_id: str, session_id: str | None = None, *, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The user's injection ledger, newest first (one session's with
        ``session_id``): ``injection_id``, ``user_id``, ``session_id``,
        ``event``, ``injected_at``, ``item_ids``, ``tokens``, and what the
        answer used of it: ``interaction_id`` (the interaction recorded for
        the prompt it was injected for), ``used`` (how many of the items
        shown, one per hit, the answer used) and ``used_share`` (of those
        items); None while the prompt is unanswered, once its interaction
        expired, and for an injection no prompt asked for (SessionStart).
        Plain dicts."""
        rows = self.engine.list_injections(
            check_id(user_id, "user_id"),
            check_optional_id(session_id, "session_id"),
            check_limit(limit),
        )
        self._join_prompt_interactions(user_id, rows)
        return rows

    def _join_prompt_interactions(self, user_id: str, rows: list[dict[str, Any]]) -> None:
        """Add to each ledger row the usage of the prompt interaction it was
        injected with. Nothing is stored twice: the hook records the prompt's
        interaction (its items: the hits shown) just before the ledger row
        (the ids those hits show), so the row's interaction is the latest
        prompt interaction of its session, recorded at or before it, that
        holds one of its ids. The ledger never shows an id twice in a
        session, so no earlier prompt's interaction holds one."""
        now = utcnow()
        asked: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            sid = row["session_id"]
            if sid not in asked:
                found = self.engine.list_interactions(user_id, sid, now, _JOINED_INTERACTIONS)
                asked[sid] = [r for r in found if r["source"] == "prompt"]
            ids = set(row["item_ids"])
            match = next(
                (
                    r
                    for r in asked[sid]  # newest first
                    if r["created_at"] <= row["injected_at"]
                    and any(item["key"] in ids for item in r["context"])
                ),
                None,
            )
            row.update(interaction_id=None, used=None, used_share=None)
            if match is None:
                continue
            row["interaction_id"] = match["interaction_id"]
            if match.get("answer") is not None:  # it holds an id: one item at least
                row["used"] = sum(bool(item.get("used")) for item in match["context"])
                row["used_share"] = round(row["used"] / len(match["context"]), 3)

    def injection_stats(self, user_id: str, since: datetime | str) -> dict[str, Any]:
        """How much context was injected for the user: ``tokens_since`` (at or
        after ``since``), ``sessions`` (how many received any), and the
        ``session_median`` and ``session_max`` of a session's total tokens
        (0 with no session)."""
        moment = parse_timestamp(since)
        if moment is None:
            raise MemoryValidationError(f"since must be an ISO 8601 time, got {since!r}")
        totals = self.engine.injection_totals(check_id(user_id, "user_id"), moment)
        per_session = sorted(totals["session_tokens"])
        return {
            "tokens_since": totals["tokens_since"],
            "sessions": len(per_session),
            "session_median": _median(per_session),
            "session_max": per_session[-1] if per_session else 0,
        }

    # -- interactions and feedback --------------------------------------------
    def record_interaction(
        self,
        user_id: str,
        session_id: str,
        question: str,
        hits: Sequence[Mapping[str, Any]],
        *,
        source: str,
        seq_from: int | None = None,
    ) -> str:
        """Record an Interaction: ``question`` asked in ``session_id`` and the
        ``hits`` given with it (recall's hit dicts; those with a feedback key
        become its context items). Kept ``session_cache_ttl_s`` seconds.
        ``seq_from``: the session's action count when it was asked (where
        the hook looks for the reply). Returns its id. No models: the hook
        calls it."""
        from sessions_graph.interactions import MAX_QUESTION_CHARS, SOURCES, context_items

        check_id(user_id, "user_id")
        check_id(session_id, "session_id")
        if source not in SOURCES:
            raise MemoryValidationError(f"source must be one of {', '.join(SOURCES)}")
        if not isinstance(question, str) or not question.strip():
            raise MemoryValidationError("an interaction's question is a non-empty string")
        now = utcnow()
        ttl = self.settings.session_cache_ttl_s
        row = {
            "interaction_id": os.urandom(16).hex(),
            "user_id": user_id,
            "session_id": session_id,
            "source": source,
            "created_at": now,
            "expires_at": _after(now, ttl) if ttl > 0 else None,
            # Stored like an action's text: redacted, valid UTF-8, cut.
            "question": _stored_text(question, MAX_QUESTION_CHARS),
            "context": [
                {**item, "text": _stored_text(item["text"], len(item["text"]))}
                for item in context_items(hits)
            ],
            "answer": None,
            "feedback": None,
            "seq_from": seq_from,
        }
        self.engine.save_interaction(row)
        return row["interaction_id"]

    def record_answer(
        self, interaction_id: str, answer: str, *, user_id: str, tool_inputs: str = ""
    ) -> Interaction | None:
        """The answer given to an interaction's question (an application's
        reply after ``recall(..., session_id=S)``). Each context item is
        marked ``used`` when the answer, or ``tool_inputs`` (what the tools
        that produced it were given), carries one of its distinctive tokens
        that the question did not; with ``implicit_feedback`` a used item's
        weight moves as a good rating would. None if the user has no live
        interaction of that id."""
        row = self.answer_interaction(
            interaction_id, answer, user_id=user_id, tool_inputs=tool_inputs
        )
        return _models().Interaction(**row) if row else None

    def answer_interaction(
        self, interaction_id: str, answer: str, *, user_id: str, tool_inputs: str = ""
    ) -> dict[str, Any] | None:
        """``record_answer`` as a plain record (the hook path, without models)."""
        from sessions_graph.interactions import MAX_ANSWER_CHARS, mark_used

        check_id(interaction_id, "interaction_id")
        check_id(user_id, "user_id")
        for name, text in (("answer", answer), ("tool_inputs", tool_inputs)):
            if not isinstance(text, str):
                raise MemoryValidationError(f"{name} must be a string")
        now = utcnow()
        row = self.engine.get_interaction(interaction_id, user_id, now)
        if row is None:
            return None
        stored = _stored_text(answer, MAX_ANSWER_CHARS)
        context = mark_used(row["context"], row["question"], f"{answer}\n{tool_inputs}")
        if not self.engine.answer_interaction(interaction_id, user_id, stored, now, context):
            return None
        if self.settings.implicit_feedback:
            used = [item["key"] for item in context if item["used"]]
            if used:
                self.engine.nudge_weights(user_id, used, 1.0, self.settings.feedback_alpha, now)
        return {**row, "answer": stored, "answered_at": now, "context": context}

    def interactions(
        self, user_id: str, session_id: str | None = None, limit: int = 50, *, plain: bool = False
    ) -> list[Interaction] | list[dict[str, Any]]:
        """The user's live interactions, newest first: of ``session_id`` when
        given, else of every session. Expired ones are never returned
        (``plain``: dicts, see ``_records``)."""
        check_id(user_id, "user_id")
        check_optional_id(session_id, "session_id")
        rows = self.engine.list_interactions(user_id, session_id, utcnow(), check_limit(limit))
        return _records("Interaction", rows, plain)

    def feedback(self, user_id: str, interaction_id: str, score: int) -> Interaction:
        """Rate an interaction's answer: ``score`` an integer from 1 (wrong) to
        5 (helped). Each element of its context (turn, memory, entity) gets
        the user's weight moved towards ``(score - 1) / 4`` by the EMA
        ``w <- clip(w + alpha * (target - w), 0, 1)`` (``feedback_alpha``;
        0.5 before any rating), which recall blends into its ranking. Weights
        are the user's own. Anything but such a score, or an interaction the
        user does not have (live), is a ``MemoryValidationError`` and
        changes nothing."""
        from sessions_graph.interactions import MAX_SCORE, MIN_SCORE

        check_id(user_id, "user_id")
        check_id(interaction_id, "interaction_id")
        if (
            isinstance(score, bool)
            or not isinstance(score, int)
            or not (MIN_SCORE <= score <= MAX_SCORE)
        ):
            raise MemoryValidationError(
                f"feedback is an integer score from {MIN_SCORE} to {MAX_SCORE}, not {score!r}"
            )
        now = utcnow()
        row = self.engine.get_interaction(interaction_id, user_id, now)
        keys = [item["key"] for item in row["context"]] if row else []
        if row is None or not self.engine.rate_interaction(
            interaction_id, user_id, score, keys, self.settings.feedback_alpha, now
        ):
            raise MemoryValidationError(
                f"interaction {interaction_id!r} not found for user {user_id!r} (or expired)"
            )
        return _models().Interaction(**{**row, "feedback": score})

    def feedback_weights(self, user_id: str, keys: Sequence[str]) -> dict[str, float]:
        """The user's feedback weight of each element key
        (``turn:<action_id>``, ``memory:<memory_id>``, ``entity:<name>``):
        0.5 for one never rated."""
        from sessions_graph.interactions import NEUTRAL_WEIGHT

        check_id(user_id, "user_id")
        stored = self.engine.feedback_weights(user_id, list(keys))
        return {k: stored.get(k, NEUTRAL_WEIGHT) for k in keys}

    def expire_interactions(self) -> int:
        """Delete the interactions past their time (the cron sweep calls it);
        the weights their ratings taught stay. Returns how many went."""
        return self.engine.expire_interactions(utcnow())

    def interaction_usage(self, user_id: str, limit: int = 5) -> list[dict[str, Any]]:
        """Per session of the user's live interactions (most recent first):
        how many were asked, answered and rated, and of the answered ones'
        context items how many the answer used, with ``used_share`` (None
        before any answer)."""
        check_id(user_id, "user_id")
        rows = self.engine.interaction_usage(user_id, utcnow(), check_limit(limit))
        for row in rows:
            row["used_share"] = round(row["used"] / row["items"], 3) if row["items"] else None
        return rows

    def forget_session(self, session_id: str) -> dict[str, int]:
        """Delete a session and everything only it produced."""
        check_id(session_id, "session_id")
        return self.engine.forget_session(session_id)

    def forget_user(self, user_id: str) -> dict[str, int]:
        """Delete a user and everything only they produced."""
        check_id(user_id, "user_id")
        return self.engine.forget_user(user_id)

    # -- reconciliation ----------------------------------------------------
    # Thin wrappers over sessions_graph.reconcile.pipeline, imported on call:
    # LightRAG and the LLM SDKs never load with the package or on the hook path.
    async def reconcile_session(
        self,
        session_id: str,
        entity_workspace: str | None = None,
        llm_model_func: LLMFunc | None = None,
        *,
        concurrency: int | None = None,
        lease_seconds: float | None = None,
        extractor: str | None = None,
    ) -> ReconciliationSummary:
        """Chunk, dedup and extract one session now (any status, unless a live
        run holds it). ``extractor``: ``llm``, ``local`` or ``auto`` (default:
        the ``extractor`` setting); ``llm`` without an LLM raises
        ``ReconciliationNotConfiguredError``."""
        from sessions_graph.reconcile import pipeline

        check_id(session_id, "session_id")
        options = _run_options(entity_workspace, concurrency, lease_seconds, extractor)
        return await pipeline.reconcile_session(
            self.engine, self.settings, session_id, options, llm_model_func
        )

    def reconcile_session_sync(
        self,
        session_id: str,
        entity_workspace: str | None = None,
        llm_model_func: LLMFunc | None = None,
        **kwargs: Any,
    ) -> ReconciliationSummary:
        """``reconcile_session`` for code without an event loop."""
        import asyncio

        return asyncio.run(
            self.reconcile_session(session_id, entity_workspace, llm_model_func, **kwargs)
        )

    async def reconcile_pending(
        self,
        limit: int = 50,
        retry_failed: bool = False,
        entity_workspace: str | None = None,
        llm_model_func: LLMFunc | None = None,
        *,
        concurrency: int | None = None,
        lease_seconds: float | None = None,
        on_claimed: Callable[[list[str]], None] | None = None,
        on_result: Callable[[ReconciliationSummary], None] | None = None,
        extractor: str | None = None,
    ) -> list[ReconciliationSummary]:
        """Sweep: claim up to ``limit`` waiting sessions, oldest first (failed
        ones too with ``retry_failed``), and reconcile them concurrently."""
        from sessions_graph.reconcile import pipeline

        options = _run_options(entity_workspace, concurrency, lease_seconds, extractor)
        return await pipeline.reconcile_pending(
            self.engine,
            self.settings,
            options,
            llm_model_func,
            limit=check_limit(limit),
            retry_failed=retry_failed,
            on_claimed=on_claimed,
            on_result=on_result,
        )


def _run_options(
    entity_workspace: str | None,
    concurrency: int | None,
    lease_seconds: float | None,
    extractor: str | None = None,
) -> Any:
    """Checked options of a reconciliation run (``pipeline.RunOptions``)."""
    from sessions_graph.reconcile import pipeline

    if entity_workspace is not None:
        check_workspace(entity_workspace)
    if concurrency is not None and (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= MAX_CONCURRENCY
    ):
        raise MemoryValidationError(f"concurrency must be an integer from 1 to {MAX_CONCURRENCY}")
    if lease_seconds is None:
        lease_seconds = pipeline.DEFAULT_LEASE_SECONDS
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, (int, float))
        or not MIN_LEASE_SECONDS <= lease_seconds <= MAX_LEASE_SECONDS  # nan fails too
    ):
        raise MemoryValidationError(
            f"lease_seconds must be a number of seconds from {MIN_LEASE_SECONDS:g}"
            f" to {MAX_LEASE_SECONDS:g}"
        )
    if extractor is not None and extractor not in EXTRACTOR_CHOICES:
        raise MemoryValidationError(f"extractor must be one of {', '.join(EXTRACTOR_CHOICES)}")
    return pipeline.RunOptions(
        entity_workspace=entity_workspace,
        concurrency=concurrency,
        lease_seconds=lease_seconds,
        extractor=extractor,
    )


def _check_project_key(value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value or len(value) > 4096):
        raise MemoryValidationError("a project key must be a string of 1-4096 characters")


def _check_source(source: object) -> str:
    if not isinstance(source, str) or not source or len(source) > 4096:
        raise MemoryValidationError("a transcript source is a path of 1-4096 characters")
    return without_surrogates(source)


def _action_row(action: Mapping[str, Any]) -> dict[str, Any]:
    """Validate one action and normalise it to the engine's record shape."""
    if not isinstance(action, Mapping):
        raise MemoryValidationError("an action must be a mapping")
    action_type = action.get("action_type")
    if action_type not in ACTION_TYPES:
        raise MemoryValidationError(
            f"invalid action_type {action_type!r}: one of {', '.join(sorted(ACTION_TYPES))}"
        )
    text = action.get("text") or ""
    if not isinstance(text, str):
        raise MemoryValidationError("action text must be a string")
    # Secrets never reach the store: the text is redacted as it is recorded
    # (agents' tool output is full of them), and the action keeps the count.
    text, redactions = redact_counted(text[: MAX_ACTION_CHARS + _REDACTION_MARGIN])
    for key in ("timestamp", "tool_name", "tool_use_id"):
        value = action.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > 512):
            raise MemoryValidationError(f"action {key} must be a string of at most 512 characters")
    origin = action.get("origin")
    if origin is not None and origin not in ORIGINS:
        raise MemoryValidationError(f"invalid origin {origin!r}: one of {', '.join(ORIGINS)}")
    return {
        "action_id": check_id(action.get("action_id"), "action_id"),
        "action_type": action_type,
        # Agents' output is recorded, not judged: a lone surrogate (valid in
        # JSON, not in UTF-8) becomes U+FFFD instead of failing the batch.
        "text": _valid_utf8(text[:MAX_ACTION_CHARS]),
        "redactions": redactions,
        "timestamp": parse_timestamp(action.get("timestamp")),
        "tool_name": _valid_utf8(action.get("tool_name")),
        "tool_use_id": _valid_utf8(action.get("tool_use_id")),
        "is_error": bool(action.get("is_error", False)),
        # None: the engine reads it from what the action is (``provenance``).
        "origin": origin,
    }


def _stored_text(text: str, limit: int) -> str:
    """Text kept with an interaction: cut, its secrets redacted, valid UTF-8."""
    return without_surrogates(redact_counted(text[:limit])[0])


def _after(moment: str, seconds: int) -> str:
    """The timestamp ``seconds`` after ``moment`` (capped at the last one
    the format holds)."""
    from datetime import timedelta

    try:
        later = datetime.fromisoformat(moment) + timedelta(seconds=seconds)
    except OverflowError:
        return "9999-12-31T23:59:59.999999+00:00"
    return later.isoformat(timespec="microseconds")


def _valid_utf8(text: str | None) -> str | None:
    return None if text is None else without_surrogates(text)


def _start_time(value: object) -> str:
    """A session start given by the caller, in the one timestamp format."""
    too_long = isinstance(value, str) and len(value) > 64
    moment = None if too_long else parse_timestamp(value)  # type: ignore[arg-type]
    if moment is None:
        raise MemoryValidationError(
            f"started_at must be a datetime or an ISO 8601 timestamp, not {str(value)[:40]!r}"
        )
    return moment


def _median(ordered: Sequence[int]) -> float:
    """The median of sorted numbers (0 of none), as ``statistics.median``
    gives it: the middle one, or the mean of the two middle ones. Not that
    module: importing it (fractions, decimal, random) cost ``status`` more
    than the rest of its counts."""
    if not ordered:
        return 0
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
