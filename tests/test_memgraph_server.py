"""The Memgraph engine's choices that depend on the server, tested without
one: a fake driver (tests/memgraph_fakes.py) answers ``SHOW VERSION`` and
records what the engine sends."""

from __future__ import annotations

import re
from typing import Any

import pytest
from memgraph_fakes import fake_engine, server_error
from neo4j import exceptions as neo4j_errors

from sessions_graph import cypher
from sessions_graph.engines import memgraph_server as server
from sessions_graph.engines.memgraph.schema import create_schema
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


#: The config-map argument of text_search.* (3.11+).
_CONFIG_MAP = re.compile(r"(text_search\.\w+\([^)]*?),\s*\{limit:\s*(\$\w+)\}\)")


def test_every_release_dependent_statement_has_both_forms() -> None:
    """A text_search call with a config map fails on 3.6-3.10: each such
    file needs its ``_int_limit`` sibling, identical but for the limit."""
    names = set(cypher.names())
    with_map = {n for n in names if _CONFIG_MAP.search(cypher.load(n))}
    assert "memory/search" in with_map
    for name in with_map:
        sibling = name + server.INT_LIMIT_SUFFIX
        assert sibling in names, f"{name} has no {sibling}"
        assert _CONFIG_MAP.sub(r"\1, \2)", cypher.load(name)) == cypher.load(sibling), name
    for name in names:
        if name.endswith(server.INT_LIMIT_SUFFIX):
            assert name.removesuffix(server.INT_LIMIT_SUFFIX) in with_map, name
            assert "{limit:" not in cypher.load(name), name


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


# -- schema: created once, checked by listing, never re-run per run -------------------------
class SchemaServer:
    """Answers SHOW INDEX INFO / SHOW CONSTRAINT INFO from the schema
    statements it has run, in Memgraph's row shape (type, label, property or
    properties, count), and nothing for data statements."""

    def __init__(self, text_index_type: str = "text (name: {name})") -> None:
        self.indexes: list[dict[str, Any]] = []
        self.constraints: list[dict[str, Any]] = []
        self.text_index_type = text_index_type

    def run(self, statement: str) -> None:
        key = server.schema_key(statement)
        assert key is not None, statement
        if key[0] == "unique":
            self.constraints.append(
                {"constraint type": "unique", "label": key[1], "properties": list(key[2:])}
            )
        elif key[0] == "index":
            self.indexes.append(
                {
                    "index type": "label+property" if key[2:] else "label",
                    "label": key[1],
                    "property": key[2] if key[2:] else None,
                    "count": 0,
                }
            )
        else:
            label = statement.split(":")[1].split("(")[0].strip("` ")
            self.indexes.append(
                {
                    "index type": self.text_index_type.format(name=key[1]),
                    "label": label,
                    "property": None,
                    "count": 0,
                }
            )

    def drop(self, statement: str) -> None:
        """Undo what the ``CREATE`` that this ``DROP`` mirrors made."""
        key = server.schema_key("CREATE" + statement[len("DROP") :])
        self.constraints = [
            c for c in self.constraints if ("unique", c["label"], *c["properties"]) != key
        ]
        self.indexes = [
            i
            for i in self.indexes
            if ("index", i["label"], *([i["property"]] if i["property"] else [])) != key
        ]

    def __call__(self, statement: str, params: dict[str, Any]) -> Any:
        if statement == "SHOW INDEX INFO":
            return list(self.indexes)
        if statement == "SHOW CONSTRAINT INFO":
            return list(self.constraints)
        if statement.startswith("CREATE ") and ("INDEX" in statement or "CONSTRAINT" in statement):
            self.run(statement)
            return []
        if statement.startswith("DROP ") and ("INDEX ON" in statement or "CONSTRAINT" in statement):
            self.drop(statement)
            return []
        if "reconcile/mark_extracted" in statement or "extracted_in" in statement:
            return [{"found": 0}]
        return []


def _ddl(sent: list[Any]) -> list[str]:
    return [s.statement for s in sent if s.statement.startswith(("CREATE ", "DROP "))]


def test_setup_creates_the_schema_and_the_configured_workspace_once() -> None:
    fake = SchemaServer()
    engine, driver = fake_engine(fake, workspaces=["base"])
    engine.setup()
    created = _ddl(driver.sent)
    assert created == [
        *cypher.statements("schema/setup"),
        "CREATE INDEX ON :`base`(entity_id)",
    ]
    # Schema statements run in auto-commit transactions only.
    assert all(s.auto_commit for s in driver.sent if s.statement in created)

    # A second setup, by this engine or another, finds everything listed.
    driver.sent.clear()
    engine.setup()
    other, other_driver = fake_engine(fake, workspaces=["base"])
    other.setup()
    assert _ddl(driver.sent) == [] and _ddl(other_driver.sent) == []


def test_setup_covers_workspaces_already_in_the_store() -> None:
    fake = SchemaServer()

    def answer(statement: str, params: dict[str, Any]) -> Any:
        if "RETURN DISTINCT e.workspace AS workspace" in statement:
            return [{"workspace": "docs"}, {"workspace": None}]
        return fake(statement, params)

    engine, driver = fake_engine(answer)
    engine.setup()
    assert "CREATE INDEX ON :`docs`(entity_id)" in _ddl(driver.sent)


@pytest.mark.parametrize(
    "text_index_type",
    ["text (name: {name})", "text", "label_text"],
)
def test_setup_adds_only_what_is_missing(text_index_type: str) -> None:
    """A store set up before a new index was added to the script (as recall's
    text index on Action text will be) gets just that index. However the
    release lists text indexes, a text index it lists is never re-created
    when the listing names it, and re-running it is tolerated when not."""
    fake = SchemaServer(text_index_type)
    setup = cypher.statements("schema/setup")
    for statement in setup:
        fake.run(statement)
    extra = "CREATE TEXT INDEX action_text_index ON :Action(text, user_key)"
    engine, driver = fake_engine(fake)
    create_schema(engine._auto, engine._ddl, [*setup, extra])
    created = _ddl(driver.sent)
    if "{name}" in text_index_type:
        assert created == [extra]
    else:  # the listing does not name text indexes: both are (re-)run
        assert created == [s for s in [*setup, extra] if "TEXT INDEX" in s]


def test_extraction_checks_the_workspace_schema_once_and_never_reruns_ddl() -> None:
    fake = SchemaServer()
    setup_engine, _ = fake_engine(fake, workspaces=["base"])
    setup_engine.setup()

    engine, driver = fake_engine(fake)
    for _ in range(3):
        engine.save_extraction("h" * 64, "base", [], [])
    assert _ddl(driver.sent) == []
    assert driver.statements().count("SHOW INDEX INFO") == 1
    assert driver.statements().count("SHOW CONSTRAINT INFO") == 1


def test_a_new_workspace_gets_its_schema_at_first_use_only() -> None:
    fake = SchemaServer()
    engine, driver = fake_engine(fake)
    engine.save_extraction("h" * 64, "fresh", [], [])
    engine.save_extraction("h" * 64, "fresh", [], [])
    # The index LightRAG looks entities up by, and no unique constraint: it
    # would fail LightRAG's ingest (see the test after next).
    assert _ddl(driver.sent) == ["CREATE INDEX ON :`fresh`(entity_id)"]
    # Another process using the workspace later finds it listed.
    later, later_driver = fake_engine(fake)
    later.save_extraction("h" * 64, "fresh", [], [])
    assert _ddl(later_driver.sent) == []


@pytest.mark.parametrize(
    ("statement", "key"),
    [
        ("CREATE CONSTRAINT ON (n:User) ASSERT n.user_id IS UNIQUE", ("unique", "User", "user_id")),
        ("CREATE INDEX ON :Memory(created_at)", ("index", "Memory", "created_at")),
        ("CREATE INDEX ON :Entity", ("index", "Entity")),
        ("CREATE INDEX ON :`base`(entity_id)", ("index", "base", "entity_id")),
        (
            "CREATE TEXT INDEX memory_content_index ON :Memory(content, user_key)",
            ("text", "memory_content_index"),
        ),
        (
            'CREATE VECTOR INDEX emb ON :Chunk(embedding) WITH CONFIG {"dimension": 3}',
            ("vector", "emb"),
        ),
        ("MATCH (n) RETURN n", None),
    ],
)
def test_schema_keys(statement: str, key: tuple[str, ...] | None) -> None:
    assert server.schema_key(statement) == key


def test_listed_schema_in_other_row_shapes() -> None:
    present = server.present_schema(
        [
            {"index type": "label+property", "label": "Memory", "property": ["user_id"]},
            {"index type": "label", "label": "Entity", "property": None, "count": 0},
            {"index type": "text", "label": "Memory", "name": "memory_content_index"},
        ],
        [{"constraint type": "unique", "label": "User", "properties": "user_id"}],
    )
    assert {
        ("index", "Memory", "user_id"),
        ("index", "Entity"),
        ("text", "memory_content_index"),
        ("unique", "User", "user_id"),
    } <= present


# -- operator precedence -----------------------------------------------------------------
#: An IN or IS [NOT] NULL whose operand runs into a + or - (or the reverse)
#: without parentheses: Memgraph 3.6.x binds IN / IS NULL tighter than + / -
#: (changed in 3.11), so such an expression means different things on
#: different releases. ``reduce(acc = ..., x IN list | ...)`` stops at ``|``.
_MIXED = (
    re.compile(r"\bIN\b[^|()\[\]\n,]*[+\-]"),
    re.compile(r"[+\-][^|()\[\]\n,]*\b(IN|IS\s+(NOT\s+)?NULL)\b"),
    re.compile(r"\bIS\s+(NOT\s+)?NULL\b[^|()\[\]\n,]*[+\-]"),
)


def test_in_and_is_null_never_mix_with_plus_minus_unparenthesised() -> None:
    offenders = [
        name
        for name in cypher.names()
        for pattern in _MIXED
        if pattern.search(cypher.load(name).replace("->", "  ").replace("<-", "  "))
    ]
    assert not offenders
    assert _MIXED[0].search("WHERE $x IN c.list + [1]")
    assert _MIXED[1].search("RETURN a + b IS NULL")


def test_a_refused_show_version_is_the_current_form() -> None:
    refused = server_error(neo4j_errors.ClientError, "You are not authorized to execute this query")
    engine, driver = fake_engine(_searching(refused))
    assert engine._server_form("memory/search") == "memory/search"
    assert driver.statements().count("SHOW VERSION") == 1


def test_a_refused_listing_runs_every_schema_statement() -> None:
    refused = server_error(neo4j_errors.ClientError, "You are not authorized to execute this query")

    def answer(statement: str, params: dict[str, Any]) -> Any:
        return refused if statement.startswith("SHOW ") else []

    engine, driver = fake_engine(answer)
    engine.setup()
    assert _ddl(driver.sent) == cypher.statements("schema/setup")


def test_setup_never_puts_a_unique_constraint_on_a_lightrag_workspace() -> None:
    """LightRAG retries only transient errors, and a commit-time unique
    violation is a client error: with the constraint, a LightRAG ingest
    racing a reconciliation on a new entity fails. And a LightRAG graph that
    already holds duplicate entity_ids cannot take the constraint at all."""

    def answer(statement: str, params: dict[str, Any]) -> Any:
        if statement.startswith("CREATE CONSTRAINT ON (n:`base`)"):
            return server_error(
                neo4j_errors.ClientError,
                "Unable to create unique constraint :base(entity_id), because an existing"
                " node violates it.",
            )
        return fake(statement, params)

    fake = SchemaServer()
    engine, driver = fake_engine(answer, workspaces=["base"])
    engine.setup()  # does not raise
    assert not [s for s in _ddl(driver.sent) if "`base`" in s and "CONSTRAINT" in s]
    assert "CREATE INDEX ON :`base`(entity_id)" in _ddl(driver.sent)


def test_setup_drops_the_unique_constraint_an_older_build_made() -> None:
    fake = SchemaServer()
    fake.run("CREATE CONSTRAINT ON (n:`base`) ASSERT n.entity_id IS UNIQUE")
    engine, driver = fake_engine(fake, workspaces=["base"])
    engine.setup()
    assert "DROP CONSTRAINT ON (n:`base`) ASSERT n.entity_id IS UNIQUE" in _ddl(driver.sent)
    # Only where one is listed: a workspace without it is left alone.
    again, again_driver = fake_engine(SchemaServer(), workspaces=["base"])
    again.setup()
    assert not [s for s in _ddl(again_driver.sent) if s.startswith("DROP")]


def test_setup_moves_actions_from_their_id_to_their_key() -> None:
    """A store of schema 11: unique by action_id, actions without a key.
    setup keys every action (a batch per transaction, until none is left)
    before anything finds actions by key, and drops the old constraint
    and index."""
    fake = SchemaServer()
    fake.run("CREATE CONSTRAINT ON (n:Action) ASSERT n.action_id IS UNIQUE")
    fake.run("CREATE INDEX ON :Action(action_id)")
    batches = iter([5000, 12, 0])

    def answer(statement: str, params: dict[str, Any]) -> Any:
        if statement == cypher.load("schema/set_action_keys"):
            return [{"keyed": next(batches)}]
        return fake(statement, params)

    engine, driver = fake_engine(answer)
    engine.setup()
    ddl = _ddl(driver.sent)
    assert "DROP CONSTRAINT ON (n:Action) ASSERT n.action_id IS UNIQUE" in ddl
    assert "DROP INDEX ON :Action(action_id)" in ddl
    assert "CREATE CONSTRAINT ON (n:Action) ASSERT n.action_key IS UNIQUE" in ddl
    sent = [s.statement for s in driver.sent]
    keying = [i for i, s in enumerate(sent) if s == cypher.load("schema/set_action_keys")]
    assert len(keying) == 3 and all(not driver.sent[i].auto_commit for i in keying)
    later = ("schema/unmarked_actions", "recall/unindexed_sessions", "schema/set_version")
    for name in later:
        assert sent.index(cypher.load(name)) > keying[-1], name
    # Set up again: nothing left to drop.
    again, again_driver = fake_engine(fake)
    again.setup()
    assert not [s for s in _ddl(again_driver.sent) if s.startswith("DROP")]
