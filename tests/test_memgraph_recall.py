"""Recall on the Memgraph engine without a server: what it sends and how it
combines the answers (the contract suite covers behaviour with a server)."""

from __future__ import annotations

from typing import Any

from memgraph_fakes import fake_engine

from sessions_graph.cypher import load
from sessions_graph.engines.memgraph.recall import turn_search_query
from sessions_graph.engines.memgraph.rows import user_key
from sessions_graph.recall.request import check_request

#: No recall filter (``Engine.search_turns``): what a plain question asks for.
FILTERS = check_request("alice", "anything").turn_filters()


def _answer(version: str, hits: dict[str, list[dict[str, Any]]]):
    def answer(statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if statement == "SHOW VERSION":
            return [{"version": version}]
        if "action_recall_index" in statement:
            field = "recall_body" if "data.recall_body:" in params["query"] else "recall_context"
            return hits[field]
        return []

    return answer


def row(action_id: str, score: float) -> dict[str, Any]:
    return {
        "action_id": action_id,
        "session_id": "s",
        "action_type": "user_message",
        "timestamp": None,
        "score": score,
    }


def test_turn_search_requires_the_user_key_and_quotes_phrases() -> None:
    query = turn_search_query([("cache",), ("东", "京")], "recall_body", "u123")
    assert query == '+data.user_key:u123 +(data.recall_body:cache OR data.recall_body:"东 京")'


def test_search_turns_adds_the_context_score_weighed_less() -> None:
    hits = {
        "recall_body": [row("a", 2.0), row("b", 1.0)],
        "recall_context": [row("b", 4.0), row("c", 1.0)],
    }
    engine, driver = fake_engine(_answer("3.14.0", hits))
    found = engine.search_turns("alice", [("cache",)], 10, {**FILTERS, "project": "/src"})
    assert [(r["action_id"], round(r["score"], 2)) for r in found] == [
        ("b", 2.2),
        ("a", 2.0),
        ("c", 0.3),
    ]
    searches = [s for s in driver.sent if "action_recall_index" in s.statement]
    assert len(searches) == 2 and all(not s.auto_commit for s in searches)
    assert all(
        s.params["query"].startswith(f"+data.user_key:{user_key('alice')} +(") for s in searches
    )
    assert all(
        s.params["user_id"] == "alice" and s.params["project_dir"] == "/src/" for s in searches
    )
    assert "{limit: $search_limit}" in searches[0].statement


def test_search_turns_takes_the_integer_limit_form_before_3_11() -> None:
    engine, driver = fake_engine(_answer("3.10.1", {"recall_body": [], "recall_context": []}))
    engine.search_turns("alice", [("cache",)], 10, FILTERS)
    searches = [s for s in driver.sent if "action_recall_index" in s.statement]
    assert searches and all(s.statement == load("recall/search_turns_int_limit") for s in searches)


def test_recorded_actions_get_their_documents_in_the_same_transaction() -> None:
    tail = [
        {"action_id": "old-1", "seq": 0, "text": "which queue?"},
        {"action_id": "new-1", "seq": 1, "text": "RabbitMQ, durable"},
    ]

    def answer(statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if statement == load("session/action_state"):
            return [{"action_count": 1, "last_action_key": "alice|old-1", "owner": "alice"}]
        if statement == load("recall/session_tail"):
            return tail
        return []

    engine, driver = fake_engine(answer)
    action = {
        "action_id": "new-1",
        "action_type": "assistant_message",
        "text": "RabbitMQ, durable",
        "timestamp": None,
        "tool_name": None,
        "tool_use_id": None,
        "is_error": False,
    }
    assert engine.add_actions("s", "alice", [action]).added == 1
    writes = [s for s in driver.sent if s.statement == load("recall/set_documents")]
    assert len(writes) == 1 and not writes[0].auto_commit
    documents = {d["action_id"]: d for d in writes[0].params["documents"]}
    # The new action, and the one before it, whose neighbours changed.
    assert documents["new-1"] == {
        "action_id": "new-1",
        "action_key": "alice|new-1",
        # Stems, as FTS5's porter tokenizer indexes them: Tantivy has none.
        "body": "rabbitmq durabl",
        "context": "which queue which queue",  # the turn before counts twice
        "speaker": None,
        "asks": False,
        "only_asks": False,
        "tells_time": False,
        "told_since": None,
        "told_until": None,
    }
    assert documents["old-1"]["asks"] is True and documents["old-1"]["only_asks"] is True
    assert documents["old-1"]["context"] == "rabbitmq durabl"
    assert writes[0].params["user_key"] == user_key("alice")


def test_a_documents_told_time_counts_from_when_its_turn_was_said() -> None:
    """recall/session_tail gives each action when it was said (its timestamp,
    else its session's start): the Told Time of "yesterday" is the day before."""
    tail = [
        {
            "action_id": "new-1",
            "seq": 0,
            "text": "We moved the queue to RabbitMQ yesterday",
            "said_at": "2024-03-06T10:00:00.000000+00:00",
        }
    ]

    def answer(statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if statement == load("session/action_state"):
            return [{"action_count": 0, "last_action_key": None, "owner": "alice"}]
        return tail if statement == load("recall/session_tail") else []

    engine, driver = fake_engine(answer)
    action = {"action_id": "new-1", "action_type": "user_message", "text": tail[0]["text"]}
    engine.add_actions("s", "alice", [action])
    (write,) = [s for s in driver.sent if s.statement == load("recall/set_documents")]
    (document,) = write.params["documents"]
    assert (document["told_since"], document["told_until"]) == (
        "2024-03-05T00:00:00.000000+00:00",
        "2024-03-06T00:00:00.000000+00:00",
    )
