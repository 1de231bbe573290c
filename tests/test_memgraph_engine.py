"""The parts of the Memgraph engine that need no server: the query files,
the per-user Tantivy query, workspace labels and error classification. Behaviour
against a server is the contract suite's job (MEMGRAPH_URL / MEMGRAPH_HOST)."""

from __future__ import annotations

import re
from pathlib import Path

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from sessions_graph import cypher
from sessions_graph.engines import memgraph
from sessions_graph.engines.memgraph import MemgraphEngine
from sessions_graph.engines.memgraph.engine import is_transient, redact_uri, translate_error
from sessions_graph.engines.memgraph.memories import user_search_query
from sessions_graph.engines.memgraph.reconcile import _entity_rows
from sessions_graph.engines.memgraph.rows import user_key
from sessions_graph.engines.memgraph.schema import _DOES_NOT_EXIST, _EXISTS_ALREADY
from sessions_graph.engines.memgraph.sessions import _number_actions
from sessions_graph.errors import MemoryValidationError, StoreError, StoreUnavailableError
from sessions_graph.query import local_score, parse, tokenize

#: Every module of the engine's package, where statement names are written.
ENGINE_SOURCE = "\n".join(
    p.read_text(encoding="utf-8") for p in sorted(Path(memgraph.__file__).parent.glob("*.py"))
)


# -- query files ------------------------------------------------------------------
def test_every_query_file_loads() -> None:
    names = cypher.names()
    assert len(names) > 40
    for name in names:
        assert cypher.load(name), name


def test_every_query_the_engine_names_exists() -> None:
    named = set(re.findall(r'"((?:[a-z_]+/)+[a-z_{}]+)"', ENGINE_SOURCE))
    expanded = set()
    for name in named:  # f"reconcile/detach_{unit_kind}_chunks"
        if "{unit_kind}" in name:
            expanded |= {name.replace("{unit_kind}", kind) for kind in ("action", "memory")}
        else:
            expanded.add(name)
    missing = expanded - set(cypher.names())
    assert not missing
    assert "memory/search" in expanded


def test_no_interpolation_markers_except_workspace() -> None:
    for name in cypher.names():
        text = cypher.load(name)
        markers = set(re.findall(r"\{[A-Za-z_][A-Za-z0-9_]*\}", text)) - {"{workspace}"}
        assert not markers, (name, markers)
        assert not re.search(r"%\(?\w*\)?[sd]|\{\{|\}\}", text), name


def test_only_entity_queries_use_the_workspace_placeholder() -> None:
    users = {n for n in cypher.names() if "{workspace}" in cypher.load(n)}
    assert users == {
        "admin/drop_workspace_constraint",
        "admin/ensure_workspace_index",
        "admin/wipe_workspace",
        "reconcile/merge_entities",
    }


def test_schema_script_has_the_constraints_and_text_index() -> None:
    setup = cypher.statements("schema/setup")
    for label, prop in [
        ("User", "user_id"),
        ("Memory", "memory_id"),
        ("Session", "session_id"),
        ("Chunk", "hash"),
        ("Action", "action_key"),
    ]:
        assert f"CREATE CONSTRAINT ON (n:{label}) ASSERT n.{prop} IS UNIQUE" in setup
    assert "CREATE TEXT INDEX memory_content_index ON :Memory(content, user_key)" in setup
    assert len(cypher.statements("schema/drop")) == len(setup)


#: Labels with one node only, never worth an index.
SINGLE_NODE_LABELS = {"SessionsGraphSchema"}


def test_every_property_a_match_starts_from_is_indexed() -> None:
    # Memgraph creates no index by itself: a MATCH that starts from a label's
    # property without one scans every node of the label (e.g. every memory
    # of every user to list one session's).
    setup = " ".join(cypher.statements("schema/setup"))
    indexed = set(re.findall(r"CREATE INDEX ON :(\w+)\((\w+)\)", setup))
    starts = set()
    for name in cypher.names():
        text = cypher._strip_comments(cypher.load(name))
        for label, prop in re.findall(r"MATCH \(\w+:(\w+)\)\s*WHERE\s+\w+\.(\w+)\s*=\s*\$", text):
            starts.add((name, label, prop))
        for label, prop in re.findall(r"MATCH \(\w+:(\w+) \{(\w+):", text):
            starts.add((name, label, prop))
    missing = {s for s in starts if s[1:] not in indexed and s[1] not in SINGLE_NODE_LABELS}
    assert not missing
    assert ("memory/list_by_session", "Memory", "session_id") in starts


#: Scripts run statement by statement (``MemgraphEngine.setup`` / ``drop``).
SCRIPTS = {"schema/setup", "schema/drop", "schema/retired"}


def test_every_query_file_is_one_statement() -> None:
    # Bolt runs one statement per call: a second statement in a file that is
    # sent whole would fail on the server, never here.
    for name in cypher.names():
        parts = cypher.statements(name)
        if name in SCRIPTS:
            assert len(parts) > 1, name
        else:
            assert parts == [cypher.load(name).rstrip(";").strip()], name


def test_statement_splitting_respects_quotes_and_comments() -> None:
    text = cypher._strip_comments(
        "MATCH (n) // a; b\nWHERE n.x = 'a;b//c' /* x;\ny */ RETURN n;\n"
        'CREATE (:`we;ird` {s: "q\\";"});'
    )
    parts = [p.strip() for p in cypher._split(text) if p.strip()]
    assert parts == [
        "MATCH (n) \nWHERE n.x = 'a;b//c'  RETURN n",
        'CREATE (:`we;ird` {s: "q\\";"})',
    ]


#: Constructs Memgraph does not support or document, with the reason; checked
#: against every query file (comments excluded). Sources: pages/querying/
#: differences-in-cypher-implementations.mdx ("Unsupported constructs",
#: "Unsupported functions"), pages/fundamentals/constraints.mdx, indexes.mdx.
DENIED = {
    r"\bEXISTS\s*\{": "EXISTS subqueries: only partly supported (no WHERE, no nesting)",
    r"\bCOUNT\s*\{": "COUNT subqueries are not supported; use count()",
    r"\bCOLLECT\s*\{": "COLLECT subqueries are not supported; use collect()",
    r"\bexists\s*\(\s*\w+\.\w+\s*\)": "exists(n.prop) is not supported; use IS NOT NULL",
    r"\bsize\s*\(\s*\(": "patterns inside functions (size((n)-->())) are not supported",
    r"\[\s*\(": "pattern comprehensions: patterns in expressions only work in exists()",
    r"\bIS\s*::": "type predicate expressions are not supported; use valueType()",
    r"\b(elementId|isEmpty|nullIf|normalize|percentile\w+|stDev\w*)\s*\(": (
        "functions listed as unsupported (elementId: use id())"
    ),
    r"\bto(Boolean|Float|Integer|String)(List|OrNull)\s*\(": "conversion functions not supported",
    r"\bshortestPath\s*\(": "Neo4j's shortestPath; Memgraph uses [*BFS]",
    r"\bREQUIRE\b|\bFOR\s*\(": "Neo4j constraint/index DDL; Memgraph documents ON ... ASSERT",
    r"\bIF\s+NOT\s+EXISTS\b": "not documented for index/constraint DDL; setup tolerates errors",
    r"\bOFFSET\b": "Neo4j 5's SKIP synonym, not in Memgraph's grammar; not a name either",
    r"\bapoc\.|\bdb\.index\.fulltext": "Neo4j plugins; Memgraph's full-text is text_search.*",
    r"\btext_search\.search_all\b": "searches every property: bypasses the data.user_key scope",
    r"\bid\s*\(\s*\w+\s*\)\s+IN\b": (
        "id(n) IN $list uses the id index only from 3.12 (every node of the label is"
        " scanned before): UNWIND $list AS w MATCH (n) WHERE id(n) = w"
    ),
}


@pytest.mark.parametrize("pattern", sorted(DENIED))
def test_no_query_uses_an_undocumented_construct(pattern: str) -> None:
    users = [n for n in cypher.names() if re.search(pattern, cypher.load(n), re.IGNORECASE)]
    assert not users, (DENIED[pattern], users)


def test_search_passes_the_limit_in_the_config_map() -> None:
    # text_search.search(index, query, config): the limit (default 1000) is a
    # config key; its YIELD columns are node and score.
    query = cypher.load("memory/search")
    assert "text_search.search('memory_content_index', $query, {limit: $search_limit})" in query
    assert "YIELD node, score" in query


def test_loader_refuses_path_like_names() -> None:
    with pytest.raises(ValueError):
        cypher.load("../pyproject")


def test_loader_looks_in_the_package_first() -> None:
    package_dir, repo_dir = cypher.SEARCH_PATH
    assert package_dir == Path(cypher.__file__).resolve().parent / "cypher"
    assert repo_dir == Path(cypher.__file__).resolve().parent.parent / "cypher"


# -- workspace labels -----------------------------------------------------------------
@pytest.mark.parametrize("good", ["base", "_x", "Work_Space_2", "a" * 64])
def test_valid_workspaces(good: str) -> None:
    assert cypher.render("admin/wipe_workspace", good) == f"MATCH (n:`{good}`) DETACH DELETE n"


@pytest.mark.parametrize("bad", ["", "2x", "a b", "a`b", "x-y", "a" * 65, "ä", "x\n"])
def test_invalid_workspaces(bad: str) -> None:
    with pytest.raises(MemoryValidationError):
        cypher.render("admin/wipe_workspace", bad)


# -- search (the query language itself: tests/test_query.py) -------------------------
def test_user_query_requires_the_user_key() -> None:
    key = user_key("alice@example.com")
    assert re.fullmatch(r"u[0-9a-f]{32}", key)
    assert tokenize(key) == [key]  # one token, as the index tokenizer sees it
    assert user_search_query(parse("a AND b"), key) == (
        f"+data.user_key:{key} +(+data.content:a +data.content:b)"
    )
    assert user_key("alice") != user_key("bob")


def test_local_score_prefers_more_hits() -> None:
    node = parse("pyth*")
    assert local_score(node, tokenize("python python")) > local_score(node, tokenize("python java"))


# -- errors -------------------------------------------------------------------------------
def _error(cls: type[neo4j_errors.Neo4jError], message: str) -> neo4j_errors.Neo4jError:
    return cls._hydrate_neo4j(
        code="Memgraph.ClientError.MemgraphError.MemgraphError", message=message
    )


@pytest.mark.parametrize(
    "exc",
    [
        neo4j_errors.ServiceUnavailable("gone"),
        neo4j_errors.SessionExpired("expired"),
        neo4j_errors.TransientError("busy"),
        _error(neo4j_errors.ClientError, "Cannot resolve conflicting transactions."),
        _error(neo4j_errors.ClientError, "Unable to commit due to serialization error."),
        _error(
            neo4j_errors.ClientError,
            "Unable to commit due to unique constraint violation on :User(user_id)",
        ),
    ],
)
def test_transient_errors(exc: Exception) -> None:
    assert is_transient(exc)


@pytest.mark.parametrize(
    "exc",
    [
        _error(neo4j_errors.ClientError, "Invalid input 'MATC'"),
        neo4j_errors.AuthError("bad credentials"),
        ValueError("not a driver error"),
    ],
)
def test_permanent_errors(exc: Exception) -> None:
    assert not is_transient(exc)


@pytest.mark.parametrize(
    ("message", "tolerated"),
    [
        # Memgraph's own wording, typographic apostrophe included.
        ('Text index "memory_content_index" doesn\u2019t exist.', _DOES_NOT_EXIST),
        ('Text index "memory_content_index" already exists.', _EXISTS_ALREADY),
    ],
)
def test_schema_statements_tolerate_present_or_absent_objects(
    monkeypatch: pytest.MonkeyPatch, message: str, tolerated: tuple[str, ...]
) -> None:
    engine = MemgraphEngine("bolt://127.0.0.1:1", max_attempts=1)

    def fail(work: object) -> None:
        raise translate_error(_error(neo4j_errors.ClientError, message), "here")

    monkeypatch.setattr(engine, "_call", fail)
    try:
        engine._ddl("DROP TEXT INDEX memory_content_index", tolerated)
        with pytest.raises(StoreError):
            engine._ddl("DROP TEXT INDEX memory_content_index", ("unrelated",))
    finally:
        engine.close()


def test_error_translation() -> None:
    where = "bolt://localhost:7687"
    assert isinstance(
        translate_error(neo4j_errors.ServiceUnavailable("x"), where),
        StoreUnavailableError,
    )
    assert isinstance(translate_error(neo4j_errors.AuthError("x"), where), StoreUnavailableError)
    error = translate_error(_error(neo4j_errors.ClientError, "Invalid input"), where)
    assert type(error) is StoreError
    assert "Invalid input" in str(error)


def test_uri_redaction() -> None:
    assert redact_uri("bolt://u:secret@db:7687") == "bolt://u@db:7687"
    assert redact_uri("bolt://db:7687") == "bolt://db:7687"


def test_bad_uri_is_unavailable_and_hides_the_password() -> None:
    with pytest.raises(StoreUnavailableError) as info:
        MemgraphEngine("bolt://u:secret@db:7687")
    assert "secret" not in str(info.value)


def test_the_user_and_password_reach_the_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user logs in with the password given (an empty one when none is);
    without a user the driver sends no credentials."""
    sent = []
    real = neo4j.GraphDatabase.driver

    def driver(uri: str, **kwargs: object) -> object:
        sent.append(kwargs["auth"])
        return real(uri, **kwargs)

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", driver)
    for credentials in ({"user": "u", "password": "p"}, {"user": "u"}, {"password": "p"}):
        MemgraphEngine("bolt://127.0.0.1:1", **credentials).close()
    assert sent == [("u", "p"), ("u", ""), None]


def test_a_malformed_port_is_unavailable_at_once() -> None:
    with pytest.raises(StoreUnavailableError, match="cannot use Memgraph URI"):
        MemgraphEngine("bolt://localhost:notaport", max_attempts=1)


def test_a_refusal_inside_a_transaction_stays_a_validation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The owner check runs inside the write function; it must surface as the
    package's MemoryValidationError (as on the embedded engine), never as a
    store fault, or a hook would spool the event for ever."""
    engine = MemgraphEngine("bolt://127.0.0.1:1", max_attempts=1)

    def refuse(work: object) -> None:
        raise MemoryValidationError("session 's-1' not found for user 'bob'")

    monkeypatch.setattr(engine, "_in_session", refuse)
    try:
        with pytest.raises(MemoryValidationError, match="not found for user"):
            engine.add_actions("s-1", "bob", [])
    finally:
        engine.close()


def test_unreachable_server_is_unavailable() -> None:
    engine = MemgraphEngine("bolt://127.0.0.1:1", max_attempts=1)
    try:
        with pytest.raises(StoreUnavailableError):
            engine.status()
    finally:
        engine.close()
        engine.close()  # safe twice


# -- helpers --------------------------------------------------------------------------------
def test_actions_are_numbered_and_chained() -> None:
    rows, links = _number_actions(
        [
            {"action_id": "b", "action_type": "user_message"},
            {"action_id": "c", "action_type": "tool_call", "is_error": 1},
        ],
        "alice",
        first_seq=3,
        previous="alice|a",
    )
    assert [r["seq"] for r in rows] == [3, 4]
    assert [(r["action_key"], r["action_id"]) for r in rows] == [("alice|b", "b"), ("alice|c", "c")]
    assert rows[1]["is_error"] is True and rows[0]["text"] == ""
    assert links == [
        {"previous": "alice|a", "next": "alice|b"},
        {"previous": "alice|b", "next": "alice|c"},
    ]


def test_entity_rows_record_mentions_like_the_embedded_engine() -> None:
    rows = _entity_rows(
        [
            {"name": "Memgraph", "entity_type": "product", "description": "a graph db"},
            {"name": "Straße", "entity_type": "place", "description": "a street"},
            {"name": "Memgraph", "entity_type": "org", "description": "in-memory"},
        ],
        [
            {"source": "Memgraph", "target": "Tantivy"},
            {"source": "Tantivy", "target": "Rust"},
        ],
    )
    assert rows == [
        # Created with the first type; the mention keeps the last occurrence.
        {
            "name": "Memgraph",
            "name_key": "memgraph",
            "entity_type": "product",
            "mention_type": "org",
            "description": "in-memory",
        },
        {
            "name": "Straße",
            "name_key": "strasse",
            "entity_type": "place",
            "mention_type": "place",
            "description": "a street",
        },
        # Relation ends the chunk did not list: a bare mention each, once.
        {
            "name": "Tantivy",
            "name_key": "tantivy",
            "entity_type": None,
            "mention_type": None,
            "description": None,
        },
        {
            "name": "Rust",
            "name_key": "rust",
            "entity_type": None,
            "mention_type": None,
            "description": None,
        },
    ]
