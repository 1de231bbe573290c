"""The storage interface every engine implements.

It is a set of *domain operations*, not a query passthrough: the façade
(``SessionsGraph``) validates input and builds models; an engine stores and
fetches records. Records are plain dicts whose keys are the field names of the
models in ``sessions_graph.models`` (so ``Memory(**row)`` works); plain dicts
keep pydantic off the hook path, where every millisecond of import counts.

Every write that changes a session's content (new actions; saving, updating
or deleting a memory it produced; ``end_session``; ``mark_pending``) increments
the session's ``content_version``, and a session that was reconciled or failed
goes back to pending (a running one is sent back when its run finishes).

Timestamps are ISO 8601 UTC strings (``2026-11-29T13:37:00.000000+00:00``),
which sort as text in both engines. Every method that writes is atomic: it
either applies whole or raises.

Graph shape, the same logically in both engines::

    (:User {user_id})-[:HAS_MEMORY]->(:Memory)
    (:User)-[:HAD_SESSION]->(:Session)-[:HAS_ACTION]->(:Action)-[:FOLLOWED_BY]->(:Action)
    (:Session)-[:PRODUCED_MEMORY]->(:Memory)
    (:Action|Memory)-[:HAS_CHUNK]->(:Chunk {hash, text})
    (:Entity)-[:MENTIONED_IN]->(:Chunk); (:Entity)-[:DIRECTED]->(:Entity)  (LightRAG's relation)
    (:Session)-[:RECEIVED]->(:Injection)  (the injection ledger)
"""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple

Record = dict[str, Any]


class ActionsAdded(NamedTuple):
    """What ``add_actions`` did with a batch: ``added`` actions were new to the
    session; ``foreign`` ones were skipped because another session recorded
    their id first (a resumed or forked agent session repeats earlier entries)."""

    added: int
    foreign: int


#: Session.reconciliation_status values.
PENDING, RUNNING, RECONCILED, FAILED = "pending", "running", "reconciled", "failed"

#: Action.action_type values, as Memgraph's Actions Graph names them.
ACTION_TYPES = frozenset(
    {"user_message", "assistant_message", "tool_call", "tool_result", "system_message"}
)

# -- extractors ----------------------------------------------------------------
#: The extractors that mark a chunk extracted: LightRAG with an LLM, and the
#: local (pattern / named-entity model) one. A chunk is marked per workspace
#: *and* extractor, so that an LLM pass over locally extracted chunks still
#: finds them to do; existing marks without an extractor are the LLM's.
LLM_EXTRACTOR, LOCAL_EXTRACTOR = "llm", "local"
EXTRACTORS = (LLM_EXTRACTOR, LOCAL_EXTRACTOR)


class ImportCursor(NamedTuple):
    """How far a session's transcript ``source`` was imported: ``offset`` bytes,
    whose prefix had ``fingerprint`` (None: nothing read yet), so that a file
    rewritten since is noticed and read again instead of from mid-line."""

    source: str
    offset: int
    fingerprint: str | None


def not_found_for_user(session_id: str, user_id: str) -> str:
    """The refusal of a write into another user's session, worded as for a
    session that does not exist: it must not tell ``user_id`` whose it is."""
    return f"session {session_id!r} not found for user {user_id!r}"


def memory_id_taken(memory_id: str) -> str:
    """The refusal of a memory saved with a ``memory_id`` in use: it does not
    say whose memory holds it."""
    return f"memory_id {memory_id!r} is already in use: choose another id"


def action_key(user_id: str, action_id: str) -> str:
    """An Action's key in storage: its User's id and its own. Action ids come
    from the runtime and some are computable (Codex: a hash of the session id
    and a byte offset), so one user must never be able to take another's:
    each engine keeps actions unique per key, not per id. ``|`` occurs in no
    valid id (``validation.ID_PATTERN``), so the key names one pair."""
    return f"{user_id}|{action_id}"


def project_scope(project: str | None) -> tuple[str | None, str | None]:
    """A project filter as the engines compare it: the project (a key, or a
    directory without its trailing slash) and the prefix of the directories
    below it (``/`` for the root, whose children start with ``/`` alone)."""
    if project is None:
        return None, None
    bare = project.rstrip("/") or "/"
    return bare, bare if bare.endswith("/") else bare + "/"


class Engine(ABC):
    """A storage engine. Instances are used from one thread at a time.

    The operations are grouped by concern, in the order of each engine
    package's modules, whose names the headings give: ``engine`` (lifecycle),
    ``memories``, ``sessions``, ``memory_files``, ``reconcile``, ``recall``,
    ``injections``, ``digests``, ``interactions``, ``forget``. The twin of an
    operation on the other engine is in the module of the same name."""

    #: Short name shown by ``status``: "embedded" or "memgraph".
    name: str

    # -- engine: lifecycle --------------------------------------------------
    @abstractmethod
    def setup(self) -> None:
        """Create the schema (constraints, indexes, text index). Idempotent."""

    @abstractmethod
    def drop(self) -> None:
        """Remove the schema objects ``setup`` made and every record stored
        through them (users, sessions, actions, memories, chunks, entities)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections. Safe to call twice."""

    @abstractmethod
    def status(self, user_id: str | None = None) -> Record:
        """``engine``, ``location``, ``schema_version`` and ``counts`` of users,
        sessions, actions, memories, chunks and entities, or with ``user_id``
        that user's (``user_counts``; the store's are then not read, which
        would count every action of every user). ``counts`` is empty until
        the schema is set up."""

    @abstractmethod
    def user_counts(self, user_id: str) -> Record:
        """The user's ``sessions``, ``actions`` and ``memories``, and the
        ``chunks`` their own units link to and the ``entities`` those chunks
        mention (each counted once). Nothing of another user's is counted;
        an unknown user gets zeros."""

    # -- memories ----------------------------------------------------------
    @abstractmethod
    def save_memory(self, memory: Record) -> None:
        """Store a new Memory (all fields given) and MERGE its User (and Session
        when ``session_id`` is set) with HAS_MEMORY / PRODUCED_MEMORY. A
        memory whose ``project_key`` is None (or missing) takes its session's.
        Every memory record read back carries ``project_key``. A
        ``memory_id`` already in use (callers may choose it) raises
        ``MemoryIdTakenError`` and writes nothing, checked in the write
        transaction (so also ``create_memory_file``)."""

    @abstractmethod
    def get_memory(self, memory_id: str, user_id: str | None = None) -> Record | None:
        """The memory, or None (also None when ``user_id`` is given and differs)."""

    @abstractmethod
    def list_memories(self, user_id: str, limit: int) -> list[Record]:
        """A user's memories, newest first (``created_at`` then ``memory_id`` desc)."""

    @abstractmethod
    def list_session_memories(self, session_id: str, limit: int) -> list[Record]:
        """Memories a session produced, newest first."""

    @abstractmethod
    def search_memories(self, user_id: str, query: Any, limit: int) -> list[Record]:
        """Full-text search of one user's memories, most relevant first.

        ``query`` is a parsed ``sessions_graph.query.Node``; each record carries a
        ``score`` (higher is more relevant). No other user's memory may ever be
        returned, and no user's results may be cut by other users' matches.
        """

    @abstractmethod
    def update_memory(
        self, memory_id: str, content: str, updated_at: str, user_id: str | None = None
    ) -> Record | None:
        """Replace the content; return the updated record, or None if not found."""

    @abstractmethod
    def delete_memory(self, memory_id: str, user_id: str | None = None) -> bool:
        """Delete the memory (and its chunk links); True if it existed."""

    # -- sessions: sessions, actions, import cursors, recent sessions --------
    @abstractmethod
    def start_session(
        self,
        session_id: str,
        user_id: str,
        started_at: str,
        cwd: str | None,
        project_key: str | None,
    ) -> None:
        """MERGE the User and the Session with HAD_SESSION. Calling it again for
        a known session keeps the earlier of its ``started_at`` and the one given
        (history imported after hooks dates the session by its real start) and
        fills in cwd / project_key if they were unset."""

    @abstractmethod
    def add_actions(self, session_id: str, user_id: str, actions: Sequence[Record]) -> ActionsAdded:
        """Append actions to a session in one transaction; say how many were new
        and how many were skipped as another session's.

        Each action has ``action_id``, ``action_type``, ``text`` (already
        redacted by the façade), ``timestamp``, ``tool_name``, ``tool_use_id``,
        ``is_error`` and ``redactions`` (how many secrets the text lost).
        Action ids are unique per user (``action_key``): another user's
        actions never hold one back. An ``action_id`` the user already
        stored in this session is skipped (delivery is at-least-once). One
        stored in another of the user's sessions is skipped too and counted
        in ``foreign``: an action belongs to the session that recorded it
        first (agent runtimes copy earlier entries into a resumed or forked
        session's transcript), and one such entry must not hold up the rest
        of the batch. A known session must be ``user_id``'s
        (``MemoryValidationError`` otherwise). New actions get the next
        ``seq`` numbers and are chained to the previous last action with
        FOLLOWED_BY. An unknown session (and its user) is created, dated by
        the first action. A session that was reconciled or failed and
        receives new actions goes back to pending.

        Each action is stored with its ``origin`` (``provenance``): the one
        given, else read from what it is; a tool result answering a derived
        call (same ``tool_use_id``, in the batch or stored) is derived. Only
        conversation actions get Turn Index documents, written from their
        ``conversation_text``; derived and client ones are not even their
        neighbours' context.
        """

    @abstractmethod
    def end_session(self, session_id: str, ended_at: str) -> bool:
        """Set ``ended_at`` and mark the session pending; False if unknown."""

    @abstractmethod
    def mark_pending(self, session_id: str) -> bool:
        """Set ``reconciliation_status = 'pending'`` unless a run holds the session;
        False if the session is unknown."""

    @abstractmethod
    def pending_sessions(self, limit: int, include_failed: bool = False) -> list[Record]:
        """Sessions waiting for reconciliation, oldest first; with
        ``include_failed`` failed ones too; running ones whose claim expired too."""

    @abstractmethod
    def get_session(self, session_id: str) -> Record | None:
        """The session record (with ``action_count``), or None."""

    @abstractmethod
    def get_actions(self, session_id: str) -> list[Record]:
        """A session's actions in order (``seq`` ascending), ``redactions``
        0 for an action stored without the count, each with its ``origin``:
        every action, derived and client ones too (fidelity)."""

    @abstractmethod
    def get_import_cursor(self, session_id: str) -> ImportCursor | None:
        """The session's import cursor (one transcript source per session), or
        None if none was stored (or the session is unknown)."""

    @abstractmethod
    def set_import_cursor(
        self, session_id: str, source: str, offset: int, fingerprint: str | None = None
    ) -> None:
        """Remember how far a transcript has been imported, and the fingerprint
        of the prefix read, replacing the session's cursor (whatever its source)."""

    @abstractmethod
    def adopt_legacy_project(
        self, user_id: str, legacy_key: str, root: str, project_key: str
    ) -> int:
        """Give the user's sessions keyed ``legacy_key`` (a project's base name,
        as stores written before full keys have it) whose ``cwd`` is ``root``
        or under ``root + "/"`` the key ``project_key``, and their memories
        keyed ``legacy_key`` too. Returns how many sessions moved; idempotent.
        Sessions elsewhere (another ``api`` directory) keep the old key."""

    @abstractmethod
    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        """The session's actions with ``offset <= seq < offset + limit``, in
        order: ``get_actions`` a page at a time (seq numbers are consecutive
        from 0, so ``offset`` is a position)."""

    # -- recent sessions (where the user left off) ---------------------------
    # Read by the SessionStart hook on every new session and by the MCP
    # ``list_sessions`` tool: one narrow read, so that neither fetches whole
    # sessions to show two lines of each.

    @abstractmethod
    def recent_sessions(
        self,
        user_id: str,
        project_key: str | None,
        limit: int,
        before: str | None,
        preview_chars: int,
    ) -> list[Record]:
        """The user's sessions, newest first (``started_at``, then
        ``session_id``, descending), only those of ``project_key`` when given
        and only those started before ``before`` when given (paging). The
        project is a project key or a directory: a session is of it when its
        key is it or its ``cwd`` is it or below it (``project_scope``). Each
        record has ``session_id``, ``user_id``, ``started_at``, ``ended_at``,
        ``cwd``, ``project_key``, ``action_count``, and the session's first
        ``user_message`` and last ``assistant_message`` (by ``seq``):
        ``first_user_message`` / ``last_assistant_message`` (conversation
        actions only, their ``conversation_text`` cut to ``preview_chars``
        characters, None if there is none) with
        ``first_user_message_at`` / ``last_assistant_message_at`` (their
        timestamps) and ``first_user_message_id`` / ``last_assistant_message_id``
        (their action ids). Another user's session is never returned."""

    # -- memory_files (the agent's own tools: MCP, memory tool) ---------------
    # A Memory File is a Memory that the Anthropic memory tool keeps at a path
    # under /memories: one per (user, path), with a version number raised by
    # every write and its newest versions kept. The tool's rules (paths, line
    # edits, messages) live in sessions_graph.agent; these are its reads and
    # its atomic writes. Deleting the Memory deletes the file and its versions.

    @abstractmethod
    def get_memory_file(self, user_id: str, path: str) -> Record | None:
        """The user's file at ``path``: the Memory's fields plus ``path`` and
        ``version``, or None."""

    @abstractmethod
    def list_memory_files(self, user_id: str, prefix: str) -> list[Record]:
        """The user's files at ``prefix`` or under ``prefix + "/"``, by path:
        ``path``, ``memory_id``, ``size`` (characters), ``updated_at``, ``version``."""

    @abstractmethod
    def create_memory_file(
        self, memory: Record, path: str, parents: Sequence[str], keep_versions: int
    ) -> str:
        """In one transaction, store ``memory`` (as ``save_memory`` does) as the
        user's file ``path`` at version 1, kept as its first version; unless a
        file is at ``path`` ("exists"), files are under ``path + "/"``
        ("directory") or a file is at one of ``parents`` ("parent"), in which
        case nothing is written. Returns "created" or that reason."""

    @abstractmethod
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
        """Replace the file's content if its version is still
        ``expected_version``: the Memory's content and ``updated_at`` change
        (its session is touched, as ``update_memory`` does), the version goes up
        by one and is kept with ``session_id`` (MERGEd for the user, refused if
        another user's), and only the newest ``keep_versions`` versions stay.
        Returns ``get_memory_file``'s record, or None if the file is gone or
        was written since ``expected_version`` (the caller reads again)."""

    @abstractmethod
    def delete_memory_files(self, user_id: str, path: str) -> int:
        """Delete the user's file at ``path`` and every file under ``path + "/"``
        (their Memories, versions and chunk links, as ``delete_memory``).
        Returns how many files were deleted."""

    @abstractmethod
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
        """In one transaction, move the file at ``old_path`` to ``new_path``, or
        every file under ``old_path + "/"`` to the same place under
        ``new_path + "/"``; each moved file gets a new version (its content, the
        new path). Returns "renamed", or, writing nothing: "missing" (no file at
        or under ``old_path``), "exists" (a file at or under ``new_path``),
        "parent" (a file at one of ``parents``, the new path's ancestors)."""

    @abstractmethod
    def memory_file_versions(self, user_id: str, path: str, limit: int) -> list[Record]:
        """The kept versions of the user's file at ``path``, newest first:
        ``version``, ``path``, ``content``, ``session_id``, ``created_at``."""

    # -- reconcile: claims, units, chunks, extraction, mentions ---------------
    # A run claims sessions with an owner and a lease, and claims each chunk
    # the same way before sending it to the LLM, so that runs in different
    # processes never pay twice for one text. Everything a run writes is
    # keyed by content hashes, so a run killed at any point leaves nothing
    # doubled and the next run picks up where it stopped.

    @abstractmethod
    def claim_sessions(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        include_failed: bool = False,
        session_id: str | None = None,
    ) -> list[Record]:
        """Atomically claim up to ``limit`` sessions for ``owner``; return them.

        Claimable: pending ones (failed ones too with ``include_failed``) and
        running ones whose lease expired; oldest first (``ended_at``, else
        ``started_at``). With ``session_id``, only that session, in any status
        except running under a live lease. A claim sets status running,
        ``claim_owner``, ``claim_expires_at`` and remembers the session's
        ``content_version``, so that content arriving during the run sends the
        session back to pending when the run finishes.
        """

    @abstractmethod
    def renew_claim(self, session_id: str, owner: str, lease_seconds: float) -> bool:
        """Extend ``owner``'s lease; False if the claim was lost."""

    @abstractmethod
    def reconcilable_units(self, session_id: str) -> list[Record]:
        """The session's conversation Actions (as their ``conversation_text``:
        derived and client ones are never extracted) and produced Memories as
        units to chunk: ``unit_kind`` ("action" | "memory"), ``unit_id``
        (what ``set_unit_chunks`` takes: an action's ``action_key``, a
        memory's ``memory_id``), ``text`` and ``content_hash`` (of the text
        as last chunked, None if never)."""

    @abstractmethod
    def set_unit_chunks(
        self, unit_kind: str, unit_id: str, content_hash: str, chunks: Sequence[Record]
    ) -> None:
        """In one transaction: MERGE ``chunks`` ({hash, text}) by hash, make them
        the unit's only HAS_CHUNK targets (in order) and record ``content_hash``
        on the unit (``unit_id``: an action's ``action_key``, a memory's
        ``memory_id``). A unit that no longer exists gets nothing; an unknown
        ``unit_kind`` raises ``MemoryValidationError``. Chunks no unit
        references any more are deleted, with their mentions and claims;
        entities left with no mention are deleted with their relations."""

    @abstractmethod
    def unextracted_chunks(
        self, session_id: str, workspace: str, extractors: Sequence[str] = (LLM_EXTRACTOR,)
    ) -> list[Record]:
        """Chunks of the session's units that none of ``extractors`` has
        extracted into ``workspace``, in unit order, each once: ``hash``,
        ``text`` and ``extracted_by`` (the extractors that did extract it
        there, sorted: a chunk the local extractor did waits for the LLM)."""

    @abstractmethod
    def claim_chunks(
        self,
        hashes: Sequence[str],
        workspace: str,
        owner: str,
        lease_seconds: float,
        extractors: Sequence[str] = (LLM_EXTRACTOR,),
    ) -> set[str]:
        """Atomically claim for ``owner``, of the chunks ``hashes``, those it may
        extract into ``workspace`` now; return their hashes.

        Claimable: a stored chunk that none of ``extractors`` has extracted into
        ``workspace`` and that is not held there by another owner's live claim
        (one claim per chunk and workspace, whatever the extractor, so that two
        extractors never save the same chunk at once). An expired claim is taken
        over and ``owner``'s own claim is renewed; either way it now expires
        ``lease_seconds`` from now. Unknown and extracted chunks are never
        returned. ``save_extraction`` ends the claim, and a deleted chunk's
        claims go with it. Another run that gets nothing for a chunk waits
        for it to be extracted, or for the claim to expire (a killed run's
        does, since nothing renews it)."""

    @abstractmethod
    def save_extraction(
        self,
        chunk_hash: str,
        workspace: str,
        entities: Sequence[Record],
        relations: Sequence[Record],
        extractor: str = LLM_EXTRACTOR,
    ) -> None:
        """In one transaction, record what extraction found in one chunk, mark
        the chunk extracted for ``workspace`` by ``extractor`` and end any
        claim on it there (``claim_chunks``). ``entities``: {name, entity_type,
        description}; ``relations``: {source, target, description, keywords,
        weight}. An entity is one node per (workspace, name), linked to every
        chunk that mentions it; the description is kept per mention, so that
        reading an entity never shows text from another user's chunk. Saving
        the same chunk again replaces its mentions and relations in the
        workspace, whichever extractor made them (the pipeline passes a later
        extractor's findings merged with the earlier one's). A relation
        end not among ``entities`` becomes an entity mentioned by the chunk
        with no type or description (as LightRAG does); an entity's type is
        the first non-empty type any mention gave it; a name listed twice
        keeps its last description. Nothing is saved for a chunk that no
        longer exists (collected while it was being extracted)."""

    @abstractmethod
    def finish_reconciliation(
        self,
        session_id: str,
        owner: str,
        status: str,
        finished_at: str,
        summary: Record | None,
        error: str | None,
    ) -> bool:
        """End ``owner``'s run: status ``reconciled`` (sets ``reconciled_at``) or
        ``failed`` (keeps ``error``); ``last_summary`` stored as given. If the
        content changed since the claim, the session goes to pending instead
        of reconciled. False (and no change) if ``owner`` no longer holds it."""

    @abstractmethod
    def session_mentions(self, session_id: str) -> list[Record]:
        """One row per mention of an entity in the session's own chunks:
        ``name``, ``workspace``, ``entity_type`` and ``description`` as that
        chunk's extraction gave them, and ``chunk_hash``; each chunk once.
        Only the mention's own type and text, never the entity node's merged
        ones, which other users' chunks may have shaped."""

    @abstractmethod
    def entity_sessions(self, name: str, user_id: str) -> list[Record]:
        """This user's sessions whose chunks mention the entity ``name`` (matched
        case-insensitively, any workspace), newest first."""

    @abstractmethod
    def user_entity_mentions(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        """The entities the given sessions of this user mention, in one read:
        one row per (``session_id``, ``name``), any workspace, with
        ``entity_type`` (the first type a mention gave, in chunk-hash order)
        and ``mentions`` (how many of the session's chunks mention it, each
        chunk once per workspace, as ``session_mentions`` counts), ordered by
        session then name. Another user's session among ``session_ids``
        gives nothing, nor does a memory not of this user."""

    # -- recall: the turn index and the lanes' reads (sessions_graph.recall) ----
    # Narrow reads for the recall lanes; ranking across lanes happens in the
    # recall layer. ``terms`` are tuples of index tokens (see
    # ``sessions_graph.index_text.words``), each matched as a phrase, any of them
    # enough. ``filters``: ``since`` / ``until`` (ISO UTC, inclusive, on the
    # action's timestamp, else its session's start), ``project`` (the
    # session's project_key or cwd, or a directory above that cwd),
    # ``exclude_session`` and ``only_session`` (session ids); None = no filter.

    @abstractmethod
    def search_turns(
        self, user_id: str, terms: Sequence[Sequence[str]], limit: int, filters: Record
    ) -> list[Record]:
        """The user's turns best first, each matched through the turn index,
        where an action is indexed with the text of its neighbouring actions
        in the session (its own text weighing more). Records: ``action_id``,
        ``session_id``, ``seq``, ``action_type``, ``timestamp`` (the action's,
        else the session's start), ``speaker`` and ``asks`` (its document's,
        ``index_text.turns.speaker`` / ``asks``; None and False for a document
        written before they were) and ``score`` (higher is better). Another
        user's action is never returned, nor cut off the user's by the limit."""

    @abstractmethod
    def turn_windows(self, user_id: str, action_ids: Sequence[str], radius: int) -> list[Record]:
        """For each of the user's actions in ``action_ids``, the actions of its
        session within ``radius`` positions (itself included), as action
        records (with ``text``) plus ``hit_id``, the action they surround.
        Other users' ids give nothing."""

    @abstractmethod
    def recall_entities(self, user_id: str, name_keys: Sequence[str], limit: int) -> list[Record]:
        """Entities whose casefolded name is one of ``name_keys`` and that the
        user's own chunks mention: ``name``, ``entity_type`` and
        ``description`` from the user's own mentions only (descriptions
        joined, distinct), and ``units``, the user's actions and memories
        whose chunks mention it: ``unit_kind``, ``unit_id`` (the action's or
        memory's own id), ``session_id``,
        ``timestamp`` (action's, else session start; memory's creation),
        ``project_key``, ``cwd``. One record per name (workspaces merged).
        At most ``limit`` of the user's mentions are read per entity node, so
        that an entity named tens of thousands of times costs what a rare
        one does (which ones: the engine's cheapest order)."""

    # -- injections: the injection ledger ---------------------------------------
    # One row per time the hook handed context to the agent: when, whose, which
    # session and event, the ids of the items it held (``turn:<action_id>``,
    # ``memory:<memory_id>``) and its estimated tokens. The hook writes one row
    # per injection and reads the session's item ids at every prompt, so that
    # nothing is injected twice in a session; both stay on indexes of
    # (user_id, session_id). Rows are the user's data: forget removes them.

    @abstractmethod
    def record_injection(self, injection: Record) -> None:
        """Store one ledger row: ``injection_id``, ``user_id``, ``session_id``,
        ``event``, ``injected_at``, ``item_ids`` (a list of strings) and
        ``tokens``; the row is linked to its session when that is the user's."""

    @abstractmethod
    def injected_items(self, user_id: str, session_id: str) -> set[str]:
        """The ids of every item injected into ``session_id`` for ``user_id``
        (empty for an unknown session, or one another user's rows are in)."""

    @abstractmethod
    def list_injections(self, user_id: str, session_id: str | None, limit: int) -> list[Record]:
        """The user's ledger rows, newest first (``injected_at``, then
        ``injection_id``, descending), only ``session_id``'s when given; each
        with the fields ``record_injection`` stored."""

    @abstractmethod
    def injection_totals(self, user_id: str, since: str) -> Record:
        """How much was injected for the user: ``tokens_since`` (the tokens of
        rows at or after ``since``) and ``session_tokens`` (each session's
        total tokens, one number per session that received anything, in no
        particular order)."""

    # -- digests: a short account of each session (sessions_graph.digest) -------
    # One per session, owned by the session's user and deleted with the
    # session. A digest record: ``session_id``, ``user_id``, ``source``
    # ("offline" | "llm"), ``substance`` (bool), ``body`` (a dict: goal,
    # files, commands, tests, decisions, open, and done for an LLM's),
    # ``action_count`` (the session's when it was built: fewer than now means
    # stale), ``input_hash`` (what an LLM digest was written from, else None)
    # and ``built_at``.

    @abstractmethod
    def save_digest(self, digest: Record) -> bool:
        """Store the session's digest, replacing the one it had, unless that
        one is the LLM's built at the same ``action_count`` and this one is
        offline (a poorer account of the same content). False, storing
        nothing, for that case and for a session that is unknown or not
        ``digest["user_id"]``'s."""

    @abstractmethod
    def get_digest(self, session_id: str) -> Record | None:
        """The session's digest record, or None."""

    @abstractmethod
    def session_digests(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        """The digests of those of ``session_ids`` that are ``user_id``'s, in
        any order; another user's session gives nothing."""

    # -- interactions: the short-term cache of a session's exchanges, and the
    # feedback weights its ratings teach --------------------------------------
    # An Interaction is one question asked within a session (a prompt the
    # hook injected context for, a recall with a session id), the context
    # items given with it, the answer when it arrives and the user's rating.
    # ``context`` is a list of items ``{key, kind, id, text, used}`` where
    # ``key`` is recall's element key (``turn:<action_id>``,
    # ``memory:<memory_id>``, ``entity:<casefolded name>``). Interactions
    # past ``expires_at`` are never returned; ``expire_interactions``
    # deletes them. Feedback weights are per (user, element key), in [0, 1];
    # an element never rated has none (recall reads it as 0.5). Every read
    # and write names the user: nothing of another user's is returned or
    # changed.

    @abstractmethod
    def save_interaction(self, interaction: Record) -> None:
        """Store a new Interaction (all fields given: ``interaction_id``,
        ``user_id``, ``session_id``, ``source``, ``created_at``,
        ``expires_at`` (None: kept), ``question``, ``context``, ``answer``
        (None), ``feedback`` (None), ``seq_from`` (the session's action count
        when it was asked, None if unknown))."""

    @abstractmethod
    def get_interaction(self, interaction_id: str, user_id: str, now: str) -> Record | None:
        """The user's interaction, or None (unknown, another user's, or expired
        at ``now``)."""

    @abstractmethod
    def list_interactions(
        self, user_id: str, session_id: str | None, now: str, limit: int, unanswered: bool = False
    ) -> list[Record]:
        """The user's live interactions, newest first (``created_at``, then
        ``interaction_id``, descending): of ``session_id`` when given, else of
        every session; with ``unanswered`` only those without an answer."""

    @abstractmethod
    def answer_interaction(
        self, interaction_id: str, user_id: str, answer: str, answered_at: str, context: Any
    ) -> bool:
        """Set the answer, ``answered_at`` and the context (its items' ``used``
        marks) of the user's live interaction; False if there is none."""

    @abstractmethod
    def rate_interaction(
        self,
        interaction_id: str,
        user_id: str,
        score: int,
        keys: Sequence[str],
        alpha: float,
        now: str,
    ) -> bool:
        """In one transaction: record ``score`` on the user's live interaction
        and move the user's weight of each element of ``keys`` towards
        ``(score - 1) / 4`` by the EMA ``w <- clip(w + alpha * (target - w), 0, 1)``
        (a weight not stored yet starts at 0.5). False, and nothing changed,
        if the interaction is not the user's or has expired."""

    @abstractmethod
    def nudge_weights(
        self, user_id: str, keys: Sequence[str], target: float, alpha: float, now: str
    ) -> None:
        """The same EMA step towards ``target`` for the user's ``keys``, without
        an interaction's rating (implicit feedback: an item the answer used)."""

    @abstractmethod
    def feedback_weights(self, user_id: str, keys: Sequence[str]) -> dict[str, float]:
        """The user's stored weights of those of ``keys`` that have one."""

    @abstractmethod
    def expire_interactions(self, now: str) -> int:
        """Delete every interaction whose ``expires_at`` is at or before
        ``now`` (the weights stay); return how many went."""

    @abstractmethod
    def interaction_usage(self, user_id: str, now: str, limit: int) -> list[Record]:
        """Per session of the user's live interactions, the most recently asked
        first: ``session_id``, ``interactions``, ``answered``, ``rated``,
        ``items`` (context items of answered interactions) and ``used`` (of
        those, the ones the answer used)."""

    # -- forget --------------------------------------------------------------
    # A user's right to be forgotten: everything of a session or a user goes,
    # and what others share (chunks, entities) goes only when nothing else holds it.

    @abstractmethod
    def forget_session(self, session_id: str) -> Record:
        """Delete the session, its actions, memories and injection ledger rows,
        and chunks / entities nothing else references; also its interactions
        and the feedback weights of its own actions and memories. Returns how
        many of each were deleted: ``sessions``, ``actions``, ``memories``,
        ``chunks``, ``entities``, ``injections``."""

    @abstractmethod
    def forget_user(self, user_id: str) -> Record:
        """``forget_session`` for each of the user's sessions, plus the user's
        memories, every ledger row of theirs, interactions, every feedback
        weight and the User itself. Returns the same counts plus ``users``."""
