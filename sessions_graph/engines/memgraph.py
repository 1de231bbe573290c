"""The Memgraph engine: the graph stored as a graph, searched with Memgraph's
Tantivy-backed text index, entities kept in LightRAG's own Memgraph shape.

Imported only when Memgraph is the chosen engine: ``neo4j`` alone costs about
500 ms to import, which the hook path must never pay.

Design notes (the why; docs/memgraph.md has the longer version):

* **Every statement is a named file** under ``cypher/`` (``sessions_graph.cypher``).
  User input only travels as ``$parameters``; the sole non-parameter part of
  any query is the entity workspace label, validated then backticked.
* **Writes are managed transactions**, wrapped in a bounded exponential
  backoff (tenacity) for what a re-run can fix: transient errors, dropped
  connections, write-write conflicts, and the unique-constraint race two
  processes hit when they MERGE the same new node at once (the re-run finds
  the node). Not a taken ``memory_id``, not a transaction the server aborted
  (timeout, TERMINATE), not ``neo4j://`` routing a standalone server refuses.
  Every transaction function is safe to re-run whole, and carries a bounded
  timeout the server enforces.
* **Release-dependent statements** have one file per form
  (``<name>`` / ``<name>_int_limit``); ``_server_form`` picks the one this
  server takes, asking ``SHOW VERSION`` once (``engines/memgraph_server``).
* **Schema out of the hot path.** ``setup`` and a workspace's first use run
  only the schema statements whose object ``SHOW INDEX INFO`` / ``SHOW
  CONSTRAINT INFO`` do not list: schema DDL waits for (and under load fails
  on) concurrent writers even when the object exists.
* **User-isolated search.** ``text_search.search`` applies its result limit
  (1000 by default) inside the procedure, before any ``WHERE user_id = ...``
  after it, so filtering afterwards lets other users' matches push a user's
  own out of the window. Instead each Memory carries ``user_key`` (``u`` +
  32 hex digits of sha256(user_id): one token, letters and digits only) in the
  same text index as ``content``, and the Tantivy query itself requires
  ``+data.user_key:<key>``. The limit then only ever counts the user's own
  matches; ``user_id`` is still checked afterwards as a second guard.
* **Query rendering.** The parsed query is rendered with Tantivy's occur
  prefixes (``+must``, ``-must_not``) and ``OR``, which every Tantivy version
  parses, rather than ``AND`` / ``NOT`` keywords. Prefix terms (``pyth*``) are
  not sent to Tantivy: Memgraph indexes properties as one JSON field, and
  Tantivy's parser ignores the phrase-prefix ``*`` on JSON fields and refuses
  it on one-word phrases. A query with a prefix term is evaluated here over
  the user's own memories instead. Every hit, on either path, is re-checked
  against the parsed query with the same token rules as the embedded engine.
  Rendering and evaluation live with the rest of the query language in
  ``sessions_graph.query`` (``to_tantivy``, ``matches``); only the per-user
  wrapping and the prefix path's scoring are here.
* **Entities** are LightRAG nodes (label = workspace, ``entity_id``,
  ``entity_type``, ``description``, ``source_id``, ``file_path``) that also
  carry ``:Entity``; relations are LightRAG's ``DIRECTED`` edges. LightRAG's
  own ingestion may write the same nodes and edges: our parts of their
  ``<SEP>`` fields are recorded in ``sg_added`` and only those are ever
  removed, and a node or edge goes only when nothing else holds it
  (``engines/lightrag_fields``). What a chunk said about an entity lives on
  its ``MENTIONED_IN`` edge, and users are only ever shown that.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import neo4j
import tenacity
from neo4j import exceptions as neo4j_errors

from sessions_graph import cypher
from sessions_graph.clock import utcnow
from sessions_graph.cypher import load, render, statements
from sessions_graph.engines import lightrag_fields as fields
from sessions_graph.engines import memgraph_server as server
from sessions_graph.engines.base import (
    EXTRACTORS,
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
from sessions_graph.errors import MemoryValidationError, StoreError, StoreUnavailableError
from sessions_graph.query import (
    Node,
    has_prefix,
    local_score,
    matches,
    needs_local,
    to_tantivy,
    tokenize,
)
from sessions_graph.index_text.records import group_entity_units
from sessions_graph.index_text.turns import TURN_CONTEXT_WEIGHT, TURN_RADIUS, turn_documents
from sessions_graph.settings import split_url_userinfo
from sessions_graph.validation import check_workspace

T = TypeVar("T")

#: Bumped when ``cypher/schema/setup`` changes in a way old stores must follow.
#: 2: recall's turn index (``action_recall_index``; ``setup`` indexes older actions).
#: 3: memory files, unique per user and path.
#: 4: turn documents hold speaker and asks; 5: and tells_time (``setup``
#: rewrites older ones).
SCHEMA_VERSION = 5

#: Seconds to wait for a TCP connection before calling the server unreachable.
CONNECTION_TIMEOUT = 10.0
#: Seconds a transaction may run before the server aborts it (sent with each
#: transaction; Memgraph aborts with "asked to abort because of transaction
#: timeout", which is not retried). Bounds a runaway query instead of letting
#: it hold locks and a connection for ever; generous, because forgetting a
#: large user is one transaction.
TRANSACTION_TIMEOUT = 120.0


#: Server messages that mean "run the transaction again": write-write
#: conflicts (help-center/errors/transactions.mdx).
_RETRY_MESSAGES = (
    "cannot resolve conflicting transactions",
    "serialization error",
)
#: A unique-constraint violation at commit ("Unable to commit due to unique
#: constraint violation on :Label(prop)") is the race of two transactions
#: MERGE-ing (or checking, then creating) the same new node: the re-run finds
#: the winner's node. Except on keys we only ever CREATE, where it means the
#: key is taken and a re-run fails the same way.
_UNIQUE_VIOLATION = re.compile(r"unique constraint violation on :`?(\w+)`?\((.*?)\)", re.I)
_CREATED_KEYS = frozenset({("memory", "memory_id")})
#: Memgraph's HintedAbortError: the transaction was aborted by its timeout,
#: by TERMINATE TRANSACTIONS, or by a shutdown. Reported as transient, but
#: re-running a transaction that hit its timeout only hits it again, and a
#: terminated one was stopped on purpose.
_ABORTED = "transaction was asked to abort"
_SHUTDOWN = "shutdown"
#: What a standalone instance answers the driver's routing request with
#: (neo4j:// URLs): enterprise builds, then community builds.
_ROUTING_REFUSED = ("not part of a cluster", "route message is not supported")

#: What a schema statement's error says when the object is already there /
#: already gone. Memgraph 3.6.2, 3.11 and main report an existing or missing
#: index, constraint or text index as a notification, not an error; older
#: builds failed for the text index ('Text index "x" already exists.',
#: 'Text index "x" doesn’t exist.', with a typographic apostrophe, which
#: ``_ddl`` folds to ASCII before matching), which is still success.
_EXISTS_ALREADY = ("already exists",)
_DOES_NOT_EXIST = ("doesn't exist", "does not exist")

#: The status values, as the $parameters the claim and queue queries use.
_STATUS_PARAMS = {
    "pending": PENDING,
    "running": RUNNING,
    "reconciled": RECONCILED,
    "failed": FAILED,
}


# -- errors -------------------------------------------------------------------
def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and everything it was raised from, including the members of an
    exception group (the driver groups the errors of every router it tried)."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(getattr(current, "exceptions", ()))
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def routing_refused(exc: BaseException) -> bool:
    """Whether the server refused routing: a ``neo4j://`` URL on an instance
    that is not a high-availability cluster's coordinator."""
    return any(
        isinstance(e, neo4j_errors.Neo4jError)
        and any(m in str(e).lower() for m in _ROUTING_REFUSED)
        for e in _causes(exc)
    )


def is_transient(exc: BaseException) -> bool:
    """Whether re-running the whole transaction may succeed."""
    if routing_refused(exc):
        return False
    if isinstance(exc, neo4j_errors.Neo4jError):
        message = str(exc).lower()
        if _ABORTED in message:
            return False
        violation = _UNIQUE_VIOLATION.search(message)
        if violation:
            key = (violation.group(1).lower(), violation.group(2).replace("`", "").strip())
            return key not in _CREATED_KEYS
        if any(m in message for m in _RETRY_MESSAGES):
            return True
    return isinstance(
        exc,
        (neo4j_errors.TransientError, neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired),
    )


def translate_error(exc: Exception, location: str) -> StoreError:
    """The package's error for a driver error, with the server's own words."""
    if routing_refused(exc):
        return StoreUnavailableError(
            f"Memgraph at {location} is not part of a cluster and refuses neo4j:// routing:"
            " use bolt:// for a single instance (neo4j:// only with a high-availability"
            " cluster's coordinators)"
        )
    if isinstance(exc, neo4j_errors.AuthError):
        return StoreUnavailableError(f"Memgraph at {location} refused the credentials: {exc}")
    if isinstance(exc, (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired)):
        return StoreUnavailableError(f"cannot reach Memgraph at {location}: {exc}")
    message = str(exc)
    if _ABORTED in message.lower() and _SHUTDOWN in message.lower():
        return StoreUnavailableError(f"Memgraph at {location} is shutting down: {message}")
    return StoreError(f"Memgraph error at {location}: {message}")


def redact_uri(uri: str) -> str:
    """The URI without a password, for status output and error messages."""
    bare, user, password = split_url_userinfo(uri)
    if not password:
        return uri
    scheme, _, rest = bare.partition("://")
    return f"{scheme}://{user}@{rest}" if user else bare


# -- search -------------------------------------------------------------------
def user_key(user_id: str) -> str:
    """The token that scopes a user's memories in the text index."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]


def turn_search_query(terms: Sequence[Sequence[str]], field: str, key: str) -> str:
    """The Tantivy query for recall's keyword lane on one property: the user's
    key required, any of the terms (phrases of index tokens, which are letters
    and digits only, so quoting is safe)."""
    words = " OR ".join(
        f"data.{field}:{t[0]}" if len(t) == 1 else f'data.{field}:"{" ".join(t)}"' for t in terms
    )
    return f"+data.user_key:{key} +({words})"


def user_search_query(node: Node, key: str) -> str:
    """The Tantivy query for one user: the user's key is required."""
    return f"+data.user_key:{key} +{to_tantivy(node, 'data.content')}"


# -- the engine -----------------------------------------------------------------


def _rows(tx: Any, name: str, **params: Any) -> list[Record]:
    """Run the named query in ``tx`` and return its rows as dicts."""
    return tx.run(load(name), params).data()


def _count(rows: Sequence[Record], key: str) -> int:
    """The count a single-row aggregate returned (0 if it returned no row)."""
    return rows[0][key] if rows else 0


def _session_record(row: Record) -> Record:
    if row.get("last_summary"):
        row["last_summary"] = json.loads(row["last_summary"])
    row["content_version"] = row.get("content_version") or 0
    row["action_count"] = row.get("action_count") or 0
    return row


class MemgraphEngine(Engine):
    """Sessions-graph on a Memgraph server (>= 3.6) reached over Bolt."""

    name = "memgraph"
    #: The least ``limit`` passed to ``text_search.search`` (the caller's limit
    #: if larger). Results are restricted to one user inside Tantivy, so this
    #: bounds only the user's own candidates; the headroom absorbs hits the
    #: exact re-check drops. A class attribute so that tests can lower it.
    search_limit: int = 1000

    def __init__(
        self,
        uri: str,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        *,
        max_attempts: int = 6,
        connection_timeout: float = CONNECTION_TIMEOUT,
        transaction_timeout: float = TRANSACTION_TIMEOUT,
        workspaces: Sequence[str] = (),
    ) -> None:
        """``max_attempts``: tries of one transaction before its error surfaces;
        a hook passes few, and a short ``connection_timeout``, so that a server
        that is down costs the agent a moment, not seconds (the event is
        spooled instead). ``workspaces``: entity workspaces whose schema
        ``setup`` creates in advance (the configured one), besides those
        already in the store."""
        self.uri = uri
        self.max_attempts = max_attempts
        self.transaction_timeout = transaction_timeout
        self.location = redact_uri(uri)
        self._session_args: dict[str, Any] = {"database": database} if database else {}
        #: Workspaces whose schema this engine has checked (``_ensure_workspace``).
        self._workspaces: set[str] = set()
        self._setup_workspaces = [check_workspace(w) for w in workspaces]
        #: The server's release, asked once (``_server_version``); None until asked.
        self._version: tuple[server.Version | None] | None = None
        #: Statement name -> the query file for this server (``_server_form``).
        self._forms: dict[str, str] = {}
        try:
            # The driver would only find a malformed port at the first query,
            # as a bare ValueError; ``.port`` raises it here, where it is clear.
            _ = urlsplit(uri).port
            # The driver's own retry loop is switched off so that retrying has
            # one bounded owner, ``_call``.
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(user, password or "") if user else None,
                max_transaction_retry_time=0.0,
                connection_timeout=connection_timeout,
            )
        except (ValueError, neo4j_errors.DriverError) as exc:
            reason = str(exc).replace(uri, self.location)  # the driver echoes the URI
            raise StoreUnavailableError(
                f"cannot use Memgraph URI {self.location}: {reason}"
            ) from None
        self._closed = False

    # -- plumbing -------------------------------------------------------------
    def _call(self, work: Callable[[Any], T]) -> T:
        """Run ``work(session)`` with bounded retries; translate driver errors."""
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(is_transient),
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=tenacity.wait_exponential(multiplier=0.05, max=2.0),
            reraise=True,
        )
        try:
            return retrying(self._in_session, work)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
            raise translate_error(exc, self.location) from None

    def _in_session(self, work: Callable[[Any], T]) -> T:
        with self._driver.session(**self._session_args) as session:
            return work(session)

    def _bounded(self, work: Callable[..., T]) -> Callable[..., T]:
        """``work`` as a transaction function the server aborts after
        ``transaction_timeout`` seconds."""
        return neo4j.unit_of_work(timeout=self.transaction_timeout)(work)

    def _write(self, work: Callable[[Any], T]) -> T:
        """One managed write transaction; ``work(tx)`` must be safe to re-run."""
        bounded = self._bounded(work)
        return self._call(lambda session: session.execute_write(bounded))

    def _read(self, name: str, **params: Any) -> list[Record]:
        bounded = self._bounded(_rows)
        return self._call(lambda session: session.execute_read(bounded, name, **params))

    def _ddl(self, statement: str, tolerated: tuple[str, ...]) -> None:
        """A schema statement in an auto-commit transaction (Memgraph refuses
        index DDL in explicit ones); errors naming ``tolerated`` are success."""
        try:
            self._call(lambda session: session.run(statement).consume())
        except StoreError as exc:
            message = str(exc).lower().replace("\u2019", "'")
            if not any(t in message for t in tolerated):
                raise

    def _auto(self, name: str) -> list[Record]:
        """A named statement in an auto-commit transaction, for what Memgraph
        refuses inside explicit ones (``SHOW VERSION``, ``SHOW ... INFO``)."""
        query = neo4j.Query(load(name), timeout=self.transaction_timeout)
        return self._call(lambda session: session.run(query).data())

    # -- the server's release -------------------------------------------------------
    def _server_version(self) -> server.Version | None:
        """The server's release, asked once per engine (None: not parseable)."""
        if self._version is None:
            try:
                rows = self._auto("admin/server_version")
            except StoreUnavailableError:
                raise
            except StoreError:
                rows = []  # refused (e.g. privileges): no version, the current form
            answer = next(iter(rows[0].values()), None) if rows else None
            self._version = (server.parse_version(answer),)
        return self._version[0]

    def _server_form(self, name: str) -> str:
        """The query file of statement ``name`` that this server takes.

        Statements whose signature changed between releases have one file per
        form: ``<name>`` (current, e.g. ``text_search.search`` with a config
        map, >= 3.11) and ``<name>_int_limit`` (a positional INTEGER limit,
        3.6-3.10). The server is asked its release only for such a statement,
        once per engine; the choice is cached per name."""
        form = self._forms.get(name)
        if form is None:
            variant = cypher.exists(name + server.INT_LIMIT_SUFFIX)
            version = self._server_version() if variant else None
            try:
                form = server.statement_form(name, version, variant)
            except server.UnsupportedServer as exc:
                raise StoreError(f"Memgraph at {self.location}: {exc}") from None
            self._forms[name] = form
        return form

    # -- schema -----------------------------------------------------------------
    def _create_schema(self, wanted: Sequence[str]) -> None:
        """Run those of the ``wanted`` schema statements whose object the
        server does not list yet.

        Checked with ``SHOW INDEX INFO`` / ``SHOW CONSTRAINT INFO`` rather
        than by re-running the DDL: index creation needs read-only storage
        access and constraint creation exclusive access, so each one waits
        for (and under load fails on) concurrent writers even when the object
        exists. A statement whose object we cannot recognise in the listing
        is run, and "already exists" is success (a concurrent setup)."""
        try:
            present = server.present_schema(
                self._auto("admin/show_indexes"), self._auto("admin/show_constraints")
            )
        except StoreUnavailableError:
            raise
        except StoreError:
            present = set()  # listing refused (e.g. privileges): run them all
        for statement in server.missing_statements(wanted, present):
            self._ddl(statement, _EXISTS_ALREADY)

    @staticmethod
    def _workspace_schema(workspace: str) -> list[str]:
        return [
            render("admin/ensure_workspace_index", workspace),
            render("admin/ensure_workspace_constraint", workspace),
        ]

    def _ensure_workspace(self, workspace: str) -> None:
        """Index the workspace label the way LightRAG looks entities up, and
        make entity_id unique in it: checked once per engine and workspace,
        created only if missing (``setup`` creates the configured one)."""
        if workspace not in self._workspaces:
            self._create_schema(self._workspace_schema(workspace))
            self._workspaces.add(workspace)

    # -- lifecycle --------------------------------------------------------------
    def setup(self) -> None:
        found = {r["workspace"] for r in self._read("admin/workspaces") if r["workspace"]}
        workspaces = sorted(found | set(self._setup_workspaces))
        wanted = statements("schema/setup")
        for workspace in workspaces:
            wanted += self._workspace_schema(workspace)
        self._create_schema(wanted)
        self._workspaces.update(workspaces)
        # Actions stored before the turn index existed get their documents.
        for row in self._read("recall/unindexed_sessions"):
            self._write(lambda tx, r=row: self._index_turns(tx, r["session_id"], r["user_id"], 0))
        self._write(lambda tx: _rows(tx, "schema/set_version", version=SCHEMA_VERSION))

    def drop(self) -> None:
        # As on the embedded engine, where the data lives in the tables it
        # drops: everything sessions-graph stored goes, user by user, with the
        # same collection forget_user does (entities still mentioned by other
        # chunks, such as a LightRAG document's, stay).
        for row in self._read("admin/users"):
            self.forget_user(row["user_id"])
        for statement in statements("schema/drop"):
            self._ddl(statement, _DOES_NOT_EXIST)
        self._write(lambda tx: _rows(tx, "schema/delete_version"))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._driver.close()

    def status(self) -> Record:
        # As the embedded engine: counts only for a store at this schema version.
        version_rows = self._read("schema/version")
        version = version_rows[0]["version"] if version_rows else 0
        return {
            "engine": self.name,
            "location": self.location,
            "schema_version": version,
            "counts": self._read("admin/counts")[0] if version == SCHEMA_VERSION else {},
        }

    def user_counts(self, user_id: str) -> Record:
        return self._read("admin/user_counts", user_id=user_id)[0]

    def wipe_for_tests(self) -> None:
        """Delete every node of our labels and of the entity workspaces in use
        (LightRAG may have added workspace nodes without ``:Entity``)."""
        found = {r["workspace"] for r in self._read("admin/workspaces") if r["workspace"]}
        for workspace in sorted(found | self._workspaces):
            query = render("admin/wipe_workspace", workspace)
            self._write(lambda tx, q=query: tx.run(q).consume())
        self._write(lambda tx: _rows(tx, "admin/wipe"))

    # -- memories --------------------------------------------------------------
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

    def _save_memory(self, tx: Any, memory: Record) -> None:
        _rows(tx, "memory/save", **memory, user_key=user_key(memory["user_id"]))
        if memory["session_id"]:
            self._ensure_session(tx, memory["session_id"], memory["user_id"], memory["created_at"])
            _rows(
                tx,
                "memory/link_session",
                memory_id=memory["memory_id"],
                session_id=memory["session_id"],
            )
            self._touch(tx, memory["session_id"])

    def save_memory(self, memory: Record) -> None:
        self._write(lambda tx: self._save_memory(tx, memory))

    def get_memory(self, memory_id: str, user_id: str | None = None) -> Record | None:
        rows = self._read("memory/get", memory_id=memory_id, user_id=user_id)
        return rows[0] if rows else None

    def list_memories(self, user_id: str, limit: int) -> list[Record]:
        return self._read("memory/list_by_user", user_id=user_id, limit=limit)

    def list_session_memories(self, session_id: str, limit: int) -> list[Record]:
        return self._read("memory/list_by_session", session_id=session_id, limit=limit)

    def search_memories(self, user_id: str, query: Any, limit: int) -> list[Record]:
        if has_prefix(query) or needs_local(query):
            return self._search_locally(user_id, query, limit)
        rows = self._read(
            self._server_form("memory/search"),
            query=user_search_query(query, user_key(user_id)),
            search_limit=max(self.search_limit, limit),
            user_id=user_id,
        )
        hits = [r for r in rows if matches(query, tokenize(r["content"]))]
        return hits[:limit]

    def _search_locally(self, user_id: str, query: Node, limit: int) -> list[Record]:
        """Prefix queries: evaluate over the user's own memories only."""
        hits = []
        for row in self._read("memory/all_of_user", user_id=user_id):
            tokens = tokenize(row["content"])
            if matches(query, tokens):
                hits.append({**row, "score": local_score(query, tokens)})
        hits.sort(key=lambda r: (r["score"], r["created_at"]), reverse=True)
        return hits[:limit]

    def update_memory(
        self, memory_id: str, content: str, updated_at: str, user_id: str | None = None
    ) -> Record | None:
        def work(tx: Any) -> Record | None:
            rows = _rows(
                tx,
                "memory/update",
                memory_id=memory_id,
                user_id=user_id,
                content=content,
                updated_at=updated_at,
            )
            if rows and rows[0]["session_id"]:
                self._touch(tx, rows[0]["session_id"])
            return rows[0] if rows else None

        return self._write(work)

    def delete_memory(self, memory_id: str, user_id: str | None = None) -> bool:
        def work(tx: Any) -> bool:
            rows = _rows(tx, "memory/delete", memory_id=memory_id, user_id=user_id)
            if not rows:
                return False
            if rows[0]["session_id"]:
                self._touch(tx, rows[0]["session_id"])
            self._collect_garbage(tx, rows[0]["chunk_hashes"])
            return True

        return self._write(work)

    # -- sessions and actions ------------------------------------------------------
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

    def add_actions(
        self, session_id: str, user_id: str, actions: Sequence[Record]
    ) -> ActionsAdded:
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
        rows = self._read(
            "session/recent",
            user_id=user_id,
            project_key=project_key,
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

    # -- pages and memory files ---------------------------------------------------------
    # A memory file is its Memory node with the MemoryFile label, a path and a
    # file_key (user_id + "|" + path) unique under that label, so two
    # processes creating one path collide at commit and the retry sees the
    # file. Its kept versions are a list of maps on the node (it goes with
    # the node), replaced whole on every write.

    def get_actions_page(self, session_id: str, offset: int, limit: int) -> list[Record]:
        rows = self._read(
            "action/page", session_id=session_id, start=offset, stop=offset + limit
        )
        for row in rows:
            row["is_error"] = bool(row["is_error"])
        return rows

    def get_memory_file(self, user_id: str, path: str) -> Record | None:
        rows = self._read("memory_file/get", file_key=_file_key(user_id, path))
        if not rows:
            return None
        row = rows[0]
        del row["versions"]
        return row

    def list_memory_files(self, user_id: str, prefix: str) -> list[Record]:
        return self._read("memory_file/list", user_id=user_id, path=prefix, under=prefix + "/")

    @staticmethod
    def _file_conflict(tx: Any, user_id: str, path: str, parents: Sequence[str]) -> str | None:
        found = {
            r["path"]
            for r in _rows(
                tx,
                "memory_file/conflicts",
                user_id=user_id,
                path=path,
                under=path + "/",
                parents=list(parents),
            )
        }
        if path in found:
            return "exists"
        if any(p.startswith(path + "/") for p in found):
            return "directory"
        return "parent" if found else None

    def create_memory_file(
        self, memory: Record, path: str, parents: Sequence[str], keep_versions: int
    ) -> str:
        content, created = memory["content"], memory["created_at"]
        first = _kept_versions([], 1, path, content, memory["session_id"], created, keep_versions)

        def work(tx: Any) -> str:
            conflict = self._file_conflict(tx, memory["user_id"], path, parents)
            if conflict:
                return conflict
            self._save_memory(tx, memory)
            _rows(
                tx,
                "memory_file/mark",
                memory_id=memory["memory_id"],
                file_key=_file_key(memory["user_id"], path),
                path=path,
                versions=first,
            )
            return "created"

        return self._write(work)

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
        key = _file_key(user_id, path)

        def work(tx: Any) -> bool:
            rows = _rows(tx, "memory_file/get", file_key=key)
            if not rows or rows[0]["version"] != expected_version:
                return False
            if session_id:
                self._ensure_session(tx, session_id, user_id, updated_at)
            versions = _kept_versions(
                rows[0]["versions"] or [],
                expected_version + 1,
                path,
                content,
                session_id,
                updated_at,
                keep_versions,
            )
            written = _rows(
                tx,
                "memory_file/write",
                file_key=key,
                expected_version=expected_version,
                content=content,
                updated_at=updated_at,
                versions=versions,
            )
            if written and written[0]["session_id"]:
                self._touch(tx, written[0]["session_id"])
            return bool(written)

        return self.get_memory_file(user_id, path) if self._write(work) else None

    def delete_memory_files(self, user_id: str, path: str) -> int:
        def work(tx: Any) -> int:
            files = _rows(
                tx, "memory_file/at_or_under", user_id=user_id, path=path, under=path + "/"
            )
            hashes: list[str] = []
            for file in files:
                for row in _rows(tx, "memory/delete", memory_id=file["memory_id"], user_id=user_id):
                    if row["session_id"]:
                        self._touch(tx, row["session_id"])
                    hashes += row["chunk_hashes"]
            self._collect_garbage(tx, hashes)
            return len(files)

        return self._write(work)

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
        def work(tx: Any) -> str:
            moving = _rows(
                tx, "memory_file/at_or_under", user_id=user_id, path=old_path, under=old_path + "/"
            )
            if not moving:
                return "missing"
            conflict = self._file_conflict(tx, user_id, new_path, parents)
            if conflict:
                return "exists" if conflict == "directory" else conflict
            if session_id:
                self._ensure_session(tx, session_id, user_id, updated_at)
            for file in moving:
                moved = new_path + file["path"][len(old_path) :]
                version = file["version"] + 1
                _rows(
                    tx,
                    "memory_file/move",
                    memory_id=file["memory_id"],
                    path=moved,
                    file_key=_file_key(user_id, moved),
                    version=version,
                    updated_at=updated_at,
                    versions=_kept_versions(
                        file["versions"] or [],
                        version,
                        moved,
                        file["content"],
                        session_id,
                        updated_at,
                        keep_versions,
                    ),
                )
            return "renamed"

        return self._write(work)

    def memory_file_versions(self, user_id: str, path: str, limit: int) -> list[Record]:
        rows = self._read("memory_file/get", file_key=_file_key(user_id, path))
        if not rows:
            return []
        versions = sorted(rows[0]["versions"] or [], key=lambda v: v["version"], reverse=True)
        return [{**v, "session_id": v.get("session_id") or None} for v in versions[:limit]]

    # -- reconciliation: claims ---------------------------------------------------
    def claim_sessions(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        include_failed: bool = False,
        session_id: str | None = None,
    ) -> list[Record]:
        now = time.time()
        params = {"owner": owner, "now": now, "expires_at": now + lease_seconds, **_STATUS_PARAMS}
        if session_id is not None:
            rows = self._write(lambda tx: _rows(tx, "claim/one", session_id=session_id, **params))
        else:
            rows = self._write(
                lambda tx: _rows(
                    tx, "claim/many", limit=limit, include_failed=include_failed, **params
                )
            )
        return [_session_record(r) for r in rows]

    def renew_claim(self, session_id: str, owner: str, lease_seconds: float) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "claim/renew",
                session_id=session_id,
                owner=owner,
                expires_at=time.time() + lease_seconds,
                **_STATUS_PARAMS,
            )
        )
        return _count(rows, "renewed") > 0

    def finish_reconciliation(
        self,
        session_id: str,
        owner: str,
        status: str,
        finished_at: str,
        summary: Record | None,
        error: str | None,
    ) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "claim/finish",
                session_id=session_id,
                owner=owner,
                status=status,
                finished_at=finished_at,
                error=error if status == FAILED else None,
                summary=json.dumps(summary) if summary is not None else None,
                **_STATUS_PARAMS,
            )
        )
        return _count(rows, "finished") > 0

    # -- reconciliation: units and chunks ---------------------------------------------
    def reconcilable_units(self, session_id: str) -> list[Record]:
        return self._read("reconcile/action_units", session_id=session_id) + self._read(
            "reconcile/memory_units", session_id=session_id
        )

    def set_unit_chunks(
        self, unit_kind: str, unit_id: str, content_hash: str, chunks: Sequence[Record]
    ) -> None:
        if unit_kind not in ("action", "memory"):
            raise MemoryValidationError(f"unit_kind must be 'action' or 'memory': {unit_kind!r}")
        # One link per chunk, at the last position it holds, as the embedded
        # engine's (unit, chunk) key keeps it when a text repeats a chunk.
        linked = {
            c["hash"]: {"hash": c["hash"], "text": c["text"], "position": i}
            for i, c in enumerate(chunks)
        }
        rows = list(linked.values())

        def work(tx: Any) -> None:
            old = [
                r["hash"]
                for r in _rows(
                    tx,
                    f"reconcile/detach_{unit_kind}_chunks",
                    unit_id=unit_id,
                    content_hash=content_hash,
                )
            ]
            if rows:
                _rows(tx, f"reconcile/attach_{unit_kind}_chunks", unit_id=unit_id, chunks=rows)
            kept = {r["hash"] for r in rows}
            self._collect_garbage(tx, [h for h in old if h not in kept])

        self._write(work)

    def unextracted_chunks(
        self, session_id: str, workspace: str, extractors: Sequence[str] = (LLM_EXTRACTOR,)
    ) -> list[Record]:
        check_workspace(workspace)
        rows = self._read("reconcile/session_chunks", session_id=session_id)
        rows.sort(key=lambda r: (r["part"], r["unit_order"], r["unit_key"], r["position"]))
        marks = {extraction_mark(workspace, e): e for e in _all_extractors(extractors)}
        wanted = {extraction_mark(workspace, e) for e in extractors}
        seen: set[str] = set()
        out = []
        for row in rows:
            done = set(row["extracted_in"])
            if row["hash"] in seen or done & wanted:
                continue
            seen.add(row["hash"])
            by = sorted(marks[m] for m in done if m in marks)
            out.append({"hash": row["hash"], "text": row["text"], "extracted_by": by})
        return out

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
        rows = self._write(
            lambda tx: _rows(
                tx,
                "reconcile/claim_chunks",
                hashes=sorted(set(hashes)),
                workspace=workspace,
                marks=sorted({extraction_mark(workspace, e) for e in extractors}),
                owner=owner,
                now=now,
                expires_at=now + lease_seconds,
            )
        )
        return {r["hash"] for r in rows}

    def _collect_garbage(self, tx: Any, chunk_hashes: Sequence[str]) -> tuple[int, int]:
        """Delete unreferenced chunks among ``chunk_hashes`` with their mentions,
        retract what they asserted, then settle the entities they mentioned.
        Returns (chunks, entities) deleted.

        The embedded engine keeps relations per chunk, so they go with it; here
        a relation is one edge per entity pair, so the chunk's assertion is
        taken off it (``_update_relations``)."""
        if not chunk_hashes:
            return 0, 0
        rows = _rows(tx, "reconcile/gc_chunks", hashes=sorted(set(chunk_hashes)))
        for row in rows:
            if row["entity_ids"]:
                self._update_relations(tx, row["hash"], row["entity_ids"])
        entity_ids = sorted({i for r in rows for i in r["entity_ids"]})
        return len(rows), self._refresh_entities(tx, entity_ids)

    @staticmethod
    def _update_relations(
        tx: Any,
        chunk_hash: str,
        entity_ids: Sequence[int],
        workspace: str | None = None,
        asserted: Sequence[Record] = (),
        ids_by_name: dict[str, int] | None = None,
    ) -> None:
        """Make the DIRECTED edges say what chunk ``chunk_hash`` now asserts:
        its old assertions among ``entity_ids`` are retracted, ``asserted``
        (relations by entity name) added. Each edge keeps one assertion per
        chunk of ours; its LightRAG fields are merged with the parts others
        (LightRAG) wrote, never overwritten (``lightrag_fields``)."""
        edges: dict[frozenset[int], Record] = {}
        for row in _rows(
            tx, "reconcile/relations_of_chunk", entity_ids=list(entity_ids), hash=chunk_hash
        ):
            edges.setdefault(frozenset((row["a_id"], row["b_id"])), row)
        wanted: dict[frozenset[int], tuple[int, int, Record]] = {}
        for rel in asserted:
            a, b = (ids_by_name or {})[rel["source"]], (ids_by_name or {})[rel["target"]]
            wanted[frozenset((a, b))] = (a, b, {"hash": chunk_hash, **rel})
        if wanted:
            pairs = [{"a": a, "b": b} for a, b, _ in wanted.values()]
            for row in _rows(tx, "reconcile/relations_between", pairs=pairs):
                edges.setdefault(frozenset((row["a_id"], row["b_id"])), row)
        writes, releases, deletes = [], [], []
        for key in sorted(set(edges) | set(wanted), key=sorted):
            row = edges.get(key)
            props = row["props"] if row else {}
            assertions = [a for a in fields.assertions_of(props) if a["hash"] != chunk_hash]
            if key in wanted:
                assertions.append(wanted[key][2])
            update = fields.relation_update(props, assertions)
            ends = (
                {"a_id": row["a_id"], "b_id": row["b_id"]}
                if row
                else {
                    "a_id": wanted[key][0],
                    "b_id": wanted[key][1],
                }
            )
            if update.action == fields.WRITE:
                writes.append(
                    {
                        **ends,
                        **update.fields,
                        "added": update.added,
                        "assertions": sorted(assertions, key=lambda a: a["hash"]),
                        "chunk_hashes": sorted(a["hash"] for a in assertions),
                        "workspace": props.get("workspace") or workspace,
                    }
                )
            elif update.action == fields.RELEASE:
                releases.append({**ends, **update.fields})
            elif row is not None:
                deletes.append(ends)
        if writes:
            _rows(tx, "reconcile/write_relations", rows=writes, created_at=int(time.time()))
        if releases:
            _rows(tx, "reconcile/release_relations", rows=releases)
        if deletes:
            _rows(tx, "reconcile/delete_relations", rows=deletes)

    @staticmethod
    def _refresh_entities(tx: Any, entity_ids: Sequence[int]) -> int:
        """Merge our mentions into the entities' LightRAG fields; release
        entities we no longer mention but something else holds, delete those
        nothing holds. Returns how many were deleted."""
        if not entity_ids:
            return 0
        writes, releases, deletes = [], [], []
        for row in _rows(tx, "reconcile/entity_state", entity_ids=list(entity_ids)):
            mentions = [m for m in row["mentions"] if m.get("hash")]
            update = fields.entity_update(row["props"], mentions, row["others"])
            if update.action == fields.WRITE:
                writes.append({"id": row["id"], **update.fields, "added": update.added})
            elif update.action == fields.RELEASE:
                releases.append({"id": row["id"], **update.fields})
            else:
                deletes.append(row["id"])
        if writes:
            _rows(tx, "reconcile/write_entities", rows=writes)
        if releases:
            _rows(tx, "reconcile/release_entities", rows=releases)
        if not deletes:
            return 0
        return _count(_rows(tx, "reconcile/delete_entities", ids=deletes), "deleted")

    # -- reconciliation: extraction ---------------------------------------------------
    def save_extraction(
        self,
        chunk_hash: str,
        workspace: str,
        entities: Sequence[Record],
        relations: Sequence[Record],
        extractor: str = LLM_EXTRACTOR,
    ) -> None:
        check_workspace(workspace)
        self._ensure_workspace(workspace)
        entity_rows = _entity_rows(entities, relations)
        relation_rows = [
            {
                "source": r["source"],
                "target": r["target"],
                "description": r.get("description") or "",
                "keywords": r.get("keywords") or "",
                "weight": float(r.get("weight") or 1.0),
            }
            for r in relations
        ]

        def work(tx: Any) -> None:
            found = _rows(
                tx,
                "reconcile/mark_extracted",
                hash=chunk_hash,
                workspace=workspace,
                mark=extraction_mark(workspace, extractor),
            )
            if not _count(found, "found"):
                return  # collected since it was read: nothing left to describe
            old = [
                r["entity_id"]
                for r in _rows(
                    tx, "reconcile/clear_chunk_mentions", hash=chunk_hash, workspace=workspace
                )
            ]
            ids_by_name: dict[str, int] = {}
            if entity_rows:
                merged = tx.run(
                    render("reconcile/merge_entities", workspace),
                    {
                        "hash": chunk_hash,
                        "workspace": workspace,
                        "created_at": int(time.time()),
                        "entities": entity_rows,
                    },
                ).data()[0]["entities"]
                ids_by_name = {e["name"]: e["id"] for e in merged}
            touched = sorted(set(old) | set(ids_by_name.values()))
            self._update_relations(tx, chunk_hash, touched, workspace, relation_rows, ids_by_name)
            self._refresh_entities(tx, touched)

        self._write(work)

    def session_mentions(self, session_id: str) -> list[Record]:
        return self._read("reconcile/session_mentions", session_id=session_id)

    def entity_sessions(self, name: str, user_id: str) -> list[Record]:
        rows = self._read("reconcile/entity_sessions", name_key=name.casefold(), user_id=user_id)
        return [_session_record(r) for r in rows]

    # -- recall ---------------------------------------------------------------------
    # The turn index is three properties of each Action in one text index:
    # ``recall_body`` (its own text), ``recall_context`` (its neighbours') and
    # ``user_key`` (as on memories: the user inside the Tantivy query). Both
    # text properties are searched separately and summed here with the
    # context weighed 0.3, which needs no boost syntax from the parser.

    def _index_turns(self, tx: Any, session_id: str, user_id: str, first_seq: int) -> None:
        """Write the documents of the session's actions from ``first_seq`` on,
        and the contexts of the ones just before them (their new neighbours)."""
        rows = _rows(
            tx,
            "recall/session_tail",
            session_id=session_id,
            from_seq=first_seq - 2 * TURN_RADIUS,
        )
        documents = turn_documents(rows, first_seq)
        if documents:
            _rows(tx, "recall/set_documents", documents=documents, user_key=user_key(user_id))

    def search_turns(
        self, user_id: str, terms: Sequence[Sequence[str]], limit: int, filters: Record
    ) -> list[Record]:
        if not terms:
            return []
        scores: dict[str, float] = {}
        found: dict[str, Record] = {}
        project = filters.get("project")
        params = {
            "user_id": user_id,
            "search_limit": max(self.search_limit, limit),
            "exclude": filters.get("exclude_session"),
            "only": filters.get("only_session"),
            "since": filters.get("since"),
            "until": filters.get("until"),
            "project": project,
            "project_dir": project.rstrip("/") + "/" if project else None,
        }
        for field, weight in (("recall_body", 1.0), ("recall_context", TURN_CONTEXT_WEIGHT)):
            query = turn_search_query(terms, field, user_key(user_id))
            for row in self._read(self._server_form("recall/search_turns"), query=query, **params):
                scores[row["action_id"]] = scores.get(row["action_id"], 0.0) + weight * row["score"]
                found.setdefault(row["action_id"], row)
        ranked = sorted(found.values(), key=lambda r: -scores[r["action_id"]])[:limit]
        return [{**r, "score": scores[r["action_id"]]} for r in ranked]

    def turn_windows(self, user_id: str, action_ids: Sequence[str], radius: int) -> list[Record]:
        if not action_ids:
            return []
        rows = self._read(
            "recall/turn_windows", user_id=user_id, action_ids=list(action_ids), radius=radius
        )
        for row in rows:
            row["is_error"] = bool(row["is_error"])
        return rows

    def recall_entities(self, user_id: str, name_keys: Sequence[str]) -> list[Record]:
        if not name_keys:
            return []
        rows = self._read("recall/entities", user_id=user_id, name_keys=list(name_keys))
        return group_entity_units(rows)

    # -- forgetting ---------------------------------------------------------------------
    def _forget_session(self, tx: Any, session_id: str) -> dict[str, int]:
        actions = _rows(tx, "forget/session_actions", session_id=session_id)
        memories = _rows(tx, "forget/session_memories", session_id=session_id)
        sessions = _count(_rows(tx, "forget/session", session_id=session_id), "deleted")
        hashes = [h for r in actions + memories for h in r["chunk_hashes"]]
        chunks, entities = self._collect_garbage(tx, hashes)
        return {
            "sessions": sessions,
            "actions": len(actions),
            "memories": len(memories),
            "chunks": chunks,
            "entities": entities,
        }

    def forget_session(self, session_id: str) -> Record:
        return self._write(lambda tx: self._forget_session(tx, session_id))

    def forget_user(self, user_id: str) -> Record:
        def work(tx: Any) -> Record:
            # The embedded engine's keys, in its order: the graph counts, then users.
            counts = dict.fromkeys(("sessions", "actions", "memories", "chunks", "entities"), 0)
            for row in _rows(tx, "forget/user_sessions", user_id=user_id):
                for key, value in self._forget_session(tx, row["session_id"]).items():
                    counts[key] += value
            memories = _rows(tx, "forget/user_memories", user_id=user_id)
            chunks, entities = self._collect_garbage(
                tx, [h for r in memories for h in r["chunk_hashes"]]
            )
            counts["memories"] += len(memories)
            counts["chunks"] += chunks
            counts["entities"] += entities
            counts["users"] = _count(_rows(tx, "forget/user", user_id=user_id), "deleted")
            return counts

        return self._write(work)


def extraction_mark(workspace: str, extractor: str) -> str:
    """The entry of ``Chunk.extracted_in`` that says ``extractor`` extracted the
    chunk into ``workspace``: the workspace itself for the LLM (as before there
    were other extractors), ``extractor:workspace`` otherwise (a workspace name
    holds no ':', so the two never collide)."""
    return workspace if extractor == LLM_EXTRACTOR else f"{extractor}:{workspace}"


def _all_extractors(extra: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*EXTRACTORS, *extra]))

def _file_key(user_id: str, path: str) -> str:
    """A memory file's unique key: ``|`` never occurs in a user_id."""
    return f"{user_id}|{path}"


def _kept_versions(
    versions: Sequence[Record],
    version: int,
    path: str,
    content: str,
    session_id: str | None,
    created_at: str,
    keep: int,
) -> list[Record]:
    """The versions to keep after writing ``version``: the newest ``keep``.
    A missing session is "" in the stored map (a map value is never null)."""
    new = {
        "version": version,
        "path": path,
        "content": content,
        "session_id": session_id or "",
        "created_at": created_at,
    }
    kept = [dict(v) for v in versions if v["version"] > version - keep]
    return [*kept, new][-keep:]


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


def _entity_rows(entities: Sequence[Record], relations: Sequence[Record]) -> list[Record]:
    """One row per name this chunk mentions, as the embedded engine records it.

    ``entity_type`` is what a new entity is created with (the first time the
    name appears); ``mention_type`` and ``description`` are the chunk's mention,
    where a repeated name's last occurrence wins. A relation end the chunk did
    not list becomes a mention with neither type nor description, as LightRAG
    gives such an end a node, so that every relation has two entities."""
    rows: dict[str, Record] = {}
    for entity in entities:
        name = entity["name"]
        row = rows.setdefault(
            name,
            {"name": name, "name_key": name.casefold(), "entity_type": entity.get("entity_type")},
        )
        row["mention_type"] = entity.get("entity_type")
        row["description"] = entity.get("description")
    for relation in relations:
        for name in (relation["source"], relation["target"]):
            rows.setdefault(
                name,
                {
                    "name": name,
                    "name_key": name.casefold(),
                    "entity_type": None,
                    "mention_type": None,
                    "description": None,
                },
            )
    return list(rows.values())
