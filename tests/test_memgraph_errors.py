"""Which Memgraph errors the engine retries and how it reports them, with
the driver's own exception classes and Memgraph's own messages (from its
source: ``src/query/exceptions.hpp``, ``help-center/errors/transactions``)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from memgraph_fakes import fake_engine, server_error
from neo4j import exceptions as neo4j_errors
from neo4j._sync.io import _pool

from sessions_graph.engines.memgraph import MemgraphEngine
from sessions_graph.engines.memgraph.engine import is_transient, routing_refused, translate_error
from sessions_graph.errors import MemoryIdTakenError, StoreError, StoreUnavailableError

ROUTING_REFUSED = "You cannot fetch routing table from an instance which is not part of a cluster."
ROUTING_UNSUPPORTED = "Route message is not supported in Memgraph!"


# -- classification ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "exc",
    [
        neo4j_errors.ServiceUnavailable("connection refused"),
        neo4j_errors.SessionExpired("expired"),
        server_error(neo4j_errors.TransientError, "busy"),
        server_error(
            neo4j_errors.TransientError,
            "Cannot resolve conflicting transactions. You can retry this transaction"
            " when the conflicting transaction is finished",
        ),
        server_error(neo4j_errors.ClientError, "Unable to commit due to serialization error."),
        # The race of concurrent MERGEs of one new node, on every MERGEd key,
        # reported as either class.
        server_error(
            neo4j_errors.ClientError,
            "Unable to commit due to unique constraint violation on :User(user_id)",
        ),
        server_error(
            neo4j_errors.TransientError,
            "Unable to commit due to unique constraint violation on :Chunk(hash)",
        ),
        server_error(
            neo4j_errors.ClientError,
            "Unable to commit due to unique constraint violation on :base(entity_id)",
        ),
        # add_actions checks which ids exist, then creates: a concurrent batch
        # of the same actions loses the race, and its re-run skips them.
        server_error(
            neo4j_errors.ClientError,
            "Unable to commit due to unique constraint violation on :Action(action_key)",
        ),
    ],
)
def test_retried(exc: BaseException) -> None:
    assert is_transient(exc)


@pytest.mark.parametrize(
    "exc",
    [
        # A memory is only ever CREATEd: its id is taken, a re-run fails again.
        server_error(
            neo4j_errors.ClientError,
            "Unable to commit due to unique constraint violation on :Memory(memory_id)",
        ),
        # HintedAbortError is sent as a TransientError, but a timed-out
        # transaction times out again and a terminated one was stopped on purpose.
        server_error(
            neo4j_errors.TransientError,
            "Transaction was asked to abort because of transaction timeout.",
        ),
        server_error(
            neo4j_errors.TransientError, "Transaction was asked to abort by another user."
        ),
        server_error(
            neo4j_errors.TransientError,
            "Transaction was asked to abort because of database shutdown.",
        ),
        server_error(
            neo4j_errors.TransientError,
            "Transaction was asked to abort either because it was executing longer than time"
            " specified or another user asked it to abort.",
        ),
        server_error(neo4j_errors.ClientError, "Invalid input 'MATC'"),
        neo4j_errors.AuthError("bad credentials"),
        ValueError("not a driver error"),
    ],
)
def test_not_retried(exc: BaseException) -> None:
    assert not is_transient(exc)


def test_an_aborted_transaction_says_why() -> None:
    timeout = translate_error(
        server_error(
            neo4j_errors.TransientError,
            "Transaction was asked to abort because of transaction timeout.",
        ),
        "bolt://db:7687",
    )
    assert type(timeout) is StoreError and "transaction timeout" in str(timeout)
    shutdown = translate_error(
        server_error(
            neo4j_errors.TransientError,
            "Transaction was asked to abort because of database shutdown.",
        ),
        "bolt://db:7687",
    )
    assert isinstance(shutdown, StoreUnavailableError)


def _count_attempts(engine: MemgraphEngine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    attempts = [0]
    real = engine._in_session

    def counted(work: Any) -> Any:
        attempts[0] += 1
        return real(work)

    monkeypatch.setattr(engine, "_in_session", counted)
    return attempts


def test_a_duplicate_memory_id_is_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    duplicate = server_error(
        neo4j_errors.ClientError,
        "Unable to commit due to unique constraint violation on :Memory(memory_id)",
    )
    engine, _ = fake_engine(lambda statement, params: duplicate, max_attempts=6)
    attempts = _count_attempts(engine, monkeypatch)
    row = {
        "memory_id": "m-1",
        "user_id": "alice",
        "content": "x",
        "session_id": None,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    # A concurrent save took the id between the check and the commit: the
    # caller hears what a save that found it taken says.
    with pytest.raises(MemoryIdTakenError, match="already in use"):
        engine.save_memory(row)
    assert attempts == [1]


def test_a_memory_id_in_use_is_refused_before_anything_is_written() -> None:
    from sessions_graph.cypher import load

    def answer(statement: str, params: dict[str, Any]) -> Any:
        if statement == load("memory/get"):
            return [{"memory_id": params["memory_id"], "user_id": "bob"}]
        return []

    engine, driver = fake_engine(answer)
    row = {
        "memory_id": "m-1",
        "user_id": "alice",
        "content": "x",
        "session_id": "s-1",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    }
    with pytest.raises(MemoryIdTakenError, match="'m-1' is already in use") as raised:
        engine.save_memory(row)
    assert "bob" not in str(raised.value)
    assert [s.statement for s in driver.sent] == [load("memory/get")]


def test_a_merge_race_is_retried_until_it_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    race = server_error(
        neo4j_errors.ClientError,
        "Unable to commit due to unique constraint violation on :User(user_id)",
    )
    failures = [race, race]

    def answer(statement: str, params: dict[str, Any]) -> Any:
        return failures.pop() if failures else []

    engine, _ = fake_engine(answer, max_attempts=6)
    attempts = _count_attempts(engine, monkeypatch)
    engine.list_memories("alice", 5)
    assert attempts == [3]


def test_a_conflict_that_persists_is_tried_six_times_then_surfaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine's default bound: a transaction that meets a conflict every
    time is tried six times, then its error reaches the caller."""
    conflict = server_error(
        neo4j_errors.TransientError,
        "Cannot resolve conflicting transactions. You can retry this transaction"
        " when the conflicting transaction is finished",
    )
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # the back-off's waits
    engine, _ = fake_engine(lambda statement, params: conflict)
    attempts = _count_attempts(engine, monkeypatch)
    with pytest.raises(StoreError, match="conflicting transactions"):
        engine.list_memories("alice", 5)
    assert attempts == [6]


def test_transactions_carry_a_timeout() -> None:
    engine, driver = fake_engine(lambda statement, params: [], transaction_timeout=7.5)
    engine.list_memories("alice", 5)  # a read
    engine.set_import_cursor("s-1", "src", 3)  # a write
    engine._server_version()  # an auto-commit statement
    assert [s.timeout for s in driver.sent] == [7.5, 7.5, 7.5]


# -- neo4j:// against a standalone instance ----------------------------------------------
@pytest.mark.parametrize("message", [ROUTING_REFUSED, ROUTING_UNSUPPORTED])
def test_routing_on_a_standalone_instance_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    """The driver's own routing code runs; only the server's answer to its
    routing request is faked, as Memgraph sends it (a FAILURE the driver turns
    into a ClientError, then groups under ServiceUnavailable)."""
    asked = [0]

    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        asked[0] += 1
        raise server_error(neo4j_errors.ClientError, message)

    # The routing pool's class: RoutedBoltPool in driver 6, Neo4jPool in 5.
    routed_pool = getattr(_pool, "RoutedBoltPool", None) or _pool.Neo4jPool
    monkeypatch.setattr(routed_pool, "fetch_routing_info", refuse)
    engine = MemgraphEngine("neo4j://127.0.0.1:1", user="u", password="secret", max_attempts=6)
    attempts = _count_attempts(engine, monkeypatch)
    try:
        with pytest.raises(StoreUnavailableError) as info:
            engine.status()
    finally:
        engine.close()
    text = str(info.value)
    assert "\n" not in text
    assert "use bolt:// for a single instance" in text
    assert "cannot reach" not in text and "secret" not in text
    assert attempts == [1]  # not retried: a retry gets the same refusal
    assert asked[0] >= 1


def test_routing_refusal_is_found_in_a_chained_cause() -> None:
    # Python 3.10 has no ExceptionGroup: the driver chains the errors instead.
    refused = server_error(neo4j_errors.ClientError, ROUTING_REFUSED)
    try:
        try:
            raise refused
        except neo4j_errors.ClientError as exc:
            raise neo4j_errors.ServiceUnavailable("Unable to retrieve routing information") from exc
    except neo4j_errors.ServiceUnavailable as exc:
        assert routing_refused(exc)
        assert not is_transient(exc)


def test_an_unreachable_cluster_is_still_unreachable() -> None:
    engine = MemgraphEngine("neo4j://127.0.0.1:1", max_attempts=1)
    try:
        with pytest.raises(StoreUnavailableError, match="cannot reach Memgraph"):
            engine.status()
    finally:
        engine.close()
