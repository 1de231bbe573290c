"""The Memgraph engine's choices that depend on the server, tested without
one: a fake driver (tests/memgraph_fakes.py) answers ``SHOW VERSION`` and
records what the engine sends."""

from __future__ import annotations

from typing import Any

import pytest
from memgraph_fakes import fake_engine

from sessions_graph import cypher
from sessions_graph.engines import memgraph_server as server
from sessions_graph.errors import StoreError
from sessions_graph.query import parse


# -- the release and the statement form ------------------------------------------------
@pytest.mark.parametrize(
    ("answer", "version"),
    [
        ("3.6.2", (3, 6, 2)),
        ("3.10.1", (3, 10, 1)),
        ("3.11.0", (3, 11, 0)),
        ("v3.14.0", (3, 14, 0)),
        ("3.12.0+41~c0ffee", (3, 12, 0)),  # a build from main
        ("3.11.0-rc1", (3, 11, 0)),
        ("3.7", (3, 7, 0)),
        ("", None),
        ("main", None),
        ("unknown build", None),
        (None, None),
        (3, None),
    ],
)
def test_versions_parse(answer: object, version: server.Version | None) -> None:
    assert server.parse_version(answer) == version


@pytest.mark.parametrize(
    ("version", "form"),
    [
        ((3, 6, 0), "memory/search_int_limit"),
        ((3, 6, 2), "memory/search_int_limit"),
        ((3, 10, 1), "memory/search_int_limit"),
        ((3, 11, 0), "memory/search"),
        ((3, 14, 0), "memory/search"),
        ((4, 0, 0), "memory/search"),
        (None, "memory/search"),  # unparsable: the current form
    ],
)
def test_form_by_release(version: server.Version | None, form: str) -> None:
    assert server.statement_form("memory/search", version, True) == form


def test_a_statement_without_variants_is_the_same_everywhere() -> None:
    assert server.statement_form("memory/get", (3, 6, 2), False) == "memory/get"
    assert server.statement_form("memory/get", (2, 0, 0), False) == "memory/get"


def test_an_older_release_is_refused_clearly() -> None:
    with pytest.raises(server.UnsupportedServer, match=r"3\.5\.1 is older than 3\.6\.0"):
        server.statement_form("memory/search", (3, 5, 1), True)


def test_both_search_forms_exist_and_differ_only_in_the_limit() -> None:
    current = cypher.load("memory/search")
    old = cypher.load("memory/search_int_limit")
    assert "text_search.search('memory_content_index', $query, {limit: $search_limit})" in current
    assert "text_search.search('memory_content_index', $query, $search_limit)" in old
    assert current.replace("{limit: $search_limit}", "$search_limit") == old


def _searching(version_answer: Any) -> Any:
    """A server answering SHOW VERSION with ``version_answer`` and any search with no row."""

    def answer(statement: str, params: dict[str, Any]) -> Any:
        if statement == "SHOW VERSION":
            if isinstance(version_answer, BaseException):
                return version_answer
            return [{"version": version_answer}]
        return []

    return answer


@pytest.mark.parametrize(
    ("answer", "sent"),
    [
        ("3.6.2", "$search_limit)"),
        ("3.10.1", "$search_limit)"),
        ("3.11.0", "{limit: $search_limit})"),
        ("3.14.0", "{limit: $search_limit})"),
        ("3.12.0+41~c0ffee", "{limit: $search_limit})"),
        ("something else", "{limit: $search_limit})"),
    ],
)
def test_search_sends_the_form_the_server_takes(answer: str, sent: str) -> None:
    engine, driver = fake_engine(_searching(answer))
    engine.search_memories("alice", parse("zebra"), 10)
    engine.search_memories("alice", parse("lion"), 10)
    searches = [s for s in driver.sent if "text_search.search" in s.statement]
    assert len(searches) == 2
    assert all(sent in s.statement.splitlines()[0] for s in searches)
    # Asked once per engine, in auto-commit (Memgraph refuses SHOW VERSION in
    # an explicit transaction); searches run in managed transactions.
    versions = [s for s in driver.sent if s.statement == "SHOW VERSION"]
    assert len(versions) == 1 and versions[0].auto_commit
    assert not any(s.auto_commit for s in searches)


def test_statements_without_variants_never_ask_the_version() -> None:
    engine, driver = fake_engine(_searching("3.6.2"))
    engine.get_memory("m-1")
    engine.list_memories("alice", 5)
    assert "SHOW VERSION" not in driver.statements()
    assert engine._server_form("memory/get") == "memory/get"
    assert "SHOW VERSION" not in driver.statements()


def test_a_too_old_server_is_a_clear_store_error() -> None:
    engine, _ = fake_engine(_searching("3.5.1"))
    with pytest.raises(StoreError, match=r"Memgraph 3\.5\.1 is older than 3\.6\.0"):
        engine.search_memories("alice", parse("zebra"), 10)


def test_an_empty_version_answer_is_the_current_form() -> None:
    engine, _ = fake_engine(lambda statement, params: [])
    assert engine._server_form("memory/search") == "memory/search"
