"""The Memgraph engine itself: the driver and its connection, managed
transactions with bounded retries, the choice of a statement's form for the
server's release, the lifecycle (setup, drop, status) and the mapping of
driver errors to the package's own.

What each part of the interface does lives in a concern module (``memories``,
``sessions``, ``memory_files``, ``reconcile``, ``recall``, ``interactions``,
``forget``), as a
mixin that reaches the plumbing here through ``self``; the design notes head
the package (``__init__``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import neo4j
import tenacity
from neo4j import exceptions as neo4j_errors

from sessions_graph import cypher
from sessions_graph.cypher import load, render, statements
from sessions_graph.engines import memgraph_server as server
from sessions_graph.engines.base import Engine, Record
from sessions_graph.engines.memgraph.digests import Digests
from sessions_graph.engines.memgraph.forget import Forget
from sessions_graph.engines.memgraph.injections import Injections
from sessions_graph.engines.memgraph.interactions import Interactions
from sessions_graph.engines.memgraph.memories import Memories
from sessions_graph.engines.memgraph.memory_files import MemoryFiles
from sessions_graph.engines.memgraph.recall import Recall
from sessions_graph.engines.memgraph.reconcile import Reconcile
from sessions_graph.engines.memgraph.rows import _rows
from sessions_graph.engines.memgraph.schema import (
    _DOES_NOT_EXIST,
    SCHEMA_VERSION,
    create_schema,
    retired_schema,
    setup_retired,
    setup_schema,
    workspace_schema,
)
from sessions_graph.engines.memgraph.sessions import Sessions
from sessions_graph.errors import (
    MemoryIdTakenError,
    SessionsGraphError,
    StoreError,
    StoreUnavailableError,
)
from sessions_graph.settings import split_url_userinfo
from sessions_graph.validation import check_workspace

T = TypeVar("T")

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
_CREATED_KEYS = frozenset({("memory", "memory_id"), ("injection", "injection_id")})
#: Memgraph's HintedAbortError: the transaction was aborted by its timeout,
#: by TERMINATE TRANSACTIONS, or by a shutdown. Reported as transient, but
#: re-running a transaction that hit its timeout only hits it again, and a
#: terminated one was stopped on purpose.
_ABORTED = "transaction was asked to abort"
_SHUTDOWN = "shutdown"
#: What a standalone instance answers the driver's routing request with
#: (neo4j:// URLs): enterprise builds, then community builds.
_ROUTING_REFUSED = ("not part of a cluster", "route message is not supported")


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


def translate_error(exc: Exception, location: str) -> SessionsGraphError:
    """The package's error for a driver error, with the server's own words;
    a memory id taken by a concurrent save is ``MemoryIdTakenError``, as when
    the save finds it taken (``memories._save_memory``)."""
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
    violation = _UNIQUE_VIOLATION.search(message)
    if violation and (violation.group(1).lower(), violation.group(2).strip("` ")) == (
        "memory",
        "memory_id",
    ):
        return MemoryIdTakenError("that memory_id is already in use: choose another id")
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


class MemgraphEngine(
    Memories,
    Sessions,
    MemoryFiles,
    Reconcile,
    Recall,
    Injections,
    Digests,
    Interactions,
    Forget,
    Engine,
):
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
    def _ensure_workspace(self, workspace: str) -> None:
        """Index the workspace label the way LightRAG looks entities up (and
        drop the unique constraint older builds made): checked once per engine
        and workspace, created only if missing (``setup`` creates the
        configured one)."""
        if workspace not in self._workspaces:
            create_schema(
                self._auto, self._ddl, workspace_schema(workspace), retired_schema(workspace)
            )
            self._workspaces.add(workspace)

    # -- lifecycle --------------------------------------------------------------
    def setup(self) -> None:
        found = {r["workspace"] for r in self._read("admin/workspaces") if r["workspace"]}
        workspaces = sorted(found | set(self._setup_workspaces))
        create_schema(self._auto, self._ddl, setup_schema(workspaces), setup_retired(workspaces))
        self._workspaces.update(workspaces)
        # Actions stored before action ids were keyed per user get their keys
        # (every later step finds actions by key) ...
        self._key_actions()
        # ... actions stored before origins were kept get theirs, and lose their
        # documents and chunks when they are not conversation ...
        self._mark_origins()
        # ... and actions stored before the turn index existed get their documents.
        self._index_unindexed_sessions()
        # Memories saved before they carried a project take their session's.
        self._write(lambda tx: _rows(tx, "memory/backfill_project"))
        self._write(lambda tx: _rows(tx, "schema/set_version", version=SCHEMA_VERSION))

    def drop(self) -> None:
        # As on the embedded engine, where the data lives in the tables it
        # drops: everything sessions-graph stored goes, user by user, with the
        # same collection forget_user does (entities still mentioned by other
        # chunks, such as a LightRAG document's, stay).
        for row in self._read("admin/users"):
            self.forget_user(row["user_id"])
        # Interactions and weights of users who never recorded a session.
        self._write(lambda tx: _rows(tx, "interaction/drop_all"))
        for statement in statements("schema/drop"):
            self._ddl(statement, _DOES_NOT_EXIST)
        self._write(lambda tx: _rows(tx, "schema/delete_version"))

    def close(self) -> None:
        # The driver's own close does nothing the second time.
        self._driver.close()

    def status(self, user_id: str | None = None) -> Record:
        # As the embedded engine: counts only for a store at this schema version.
        version_rows = self._read("schema/version")
        version = version_rows[0]["version"] if version_rows else 0
        counts: Record = {}
        if version == SCHEMA_VERSION:
            counts = self._counts() if user_id is None else self.user_counts(user_id)
        return {
            "engine": self.name,
            "location": self.location,
            "schema_version": version,
            "counts": counts,
        }

    def _counts(self) -> Record:
        counts = self._read("admin/counts")[0]
        # Actions kept out of recall, injection and extraction: what ``setup``
        # reports (as the embedded engine's status).
        for row in self._read("admin/origin_counts"):
            counts[f"{row['origin']}_actions"] = row["actions"]
        return counts

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
