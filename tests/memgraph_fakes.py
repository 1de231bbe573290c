"""A stand-in for the neo4j driver, for testing the Memgraph engine's own
decisions without a server: it records every statement the engine sends
(and whether it ran in auto-commit or in a managed transaction) and answers
with what the test scripts.

Only the surface the engine uses is imitated: ``driver.session()``,
``session.run`` (auto-commit), ``session.execute_read`` /
``execute_write`` (the transaction function gets a ``tx`` with ``run``) and
results with ``data()`` / ``consume()``. Errors are the driver's own
exception classes, built the way the driver builds them from a server
FAILURE message."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from neo4j import exceptions as neo4j_errors

from sessions_graph.engines.memgraph import MemgraphEngine

#: Answers a statement: rows, or an exception to raise.
Answer = Callable[[str, dict[str, Any]], "list[dict[str, Any]] | BaseException"]


def server_error(
    cls: type[neo4j_errors.Neo4jError], message: str, code: str | None = None
) -> neo4j_errors.Neo4jError:
    """A driver error as the driver hydrates a Memgraph FAILURE: the class
    follows from the code's classification, as Memgraph sends it
    (``Memgraph.TransientError...`` for retryable server exceptions)."""
    error = neo4j_errors.Neo4jError._hydrate_neo4j(
        code=code or f"Memgraph.{cls.__name__}.MemgraphError.MemgraphError", message=message
    )
    assert isinstance(error, cls), (type(error), cls)
    return error


@dataclass
class Sent:
    statement: str
    params: dict[str, Any]
    auto_commit: bool
    timeout: float | None = None


class FakeResult:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def data(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._rows]

    def consume(self) -> None:
        return None


@dataclass
class FakeDriver:
    answer: Answer
    sent: list[Sent] = field(default_factory=list)
    sessions: int = 0

    def _run(self, statement: Any, params: Any, auto_commit: bool, timeout: float | None) -> Any:
        text = getattr(statement, "text", statement)
        timeout = getattr(statement, "timeout", timeout)
        self.sent.append(Sent(str(text), dict(params or {}), auto_commit, timeout))
        out = self.answer(str(text), dict(params or {}))
        if isinstance(out, BaseException):
            raise out
        return FakeResult(out)

    def session(self, **_: Any) -> FakeSession:
        self.sessions += 1
        return FakeSession(self)

    def close(self) -> None:
        return None

    def statements(self) -> list[str]:
        return [s.statement for s in self.sent]


class FakeTx:
    def __init__(self, driver: FakeDriver, timeout: float | None) -> None:
        self._driver = driver
        self._timeout = timeout

    def run(self, statement: Any, params: Any = None, **kw: Any) -> FakeResult:
        return self._driver._run(statement, {**(params or {}), **kw}, False, self._timeout)


class FakeSession:
    def __init__(self, driver: FakeDriver) -> None:
        self._driver = driver

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, statement: Any, params: Any = None, **kw: Any) -> FakeResult:
        return self._driver._run(statement, {**(params or {}), **kw}, True, None)

    def _managed(self, work: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        tx = FakeTx(self._driver, getattr(work, "timeout", None))
        return work(tx, *args, **kw)

    execute_read = _managed
    execute_write = _managed


def fake_engine(answer: Answer, **kwargs: Any) -> tuple[MemgraphEngine, FakeDriver]:
    """A MemgraphEngine whose driver is a FakeDriver answering with ``answer``."""
    engine = MemgraphEngine("bolt://127.0.0.1:1", **kwargs)
    engine._driver.close()
    driver = FakeDriver(answer)
    engine._driver = driver  # type: ignore[assignment]
    return engine, driver
