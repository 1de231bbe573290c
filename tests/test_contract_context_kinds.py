"""Derived content and client context, on every engine: stored and returned
by ``get_actions`` with their origin, never recalled, never in a "where you
left off" preview, never reconciled.

The transcripts under ``tests/fixtures/context/`` were written by the real
clients (Claude Code 2.x and Codex 0.171, against a scripted model API, with
our hooks and MCP server installed): a session that called our MCP
``recall`` and received our Injected Context, a slash command, and Codex's
developer and environment messages. They are read here through the hook
path's own reader.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import action_key
from sessions_graph.hooks.transcript import import_actions

FIXTURES = Path(__file__).parent / "fixtures" / "context"


def _import(graph: SessionsGraph, client: str, name: str, session_id: str) -> None:
    graph.record_session_start(session_id, user_id="alice", cwd="/src/orion", project_key="orion")
    actions = import_actions(FIXTURES / client / f"{name}.jsonl", 0, session_id).actions
    assert actions, name
    graph.record_actions(session_id, actions, user_id="alice")


def _by_origin(graph: SessionsGraph, session_id: str) -> dict[str, list]:
    kinds: dict[str, list] = {"conversation": [], "derived": [], "client": []}
    for action in graph.get_actions(session_id):
        kinds[action.origin].append(action)
    return kinds


def _hit_ids(graph: SessionsGraph, query: str) -> set[str]:
    return {h.action_id for h in graph.recall("alice", query, scope="turns").hits if h.action_id}


def test_claude_codes_mcp_recall_is_kept_but_never_recalled(graph: SessionsGraph) -> None:
    _import(graph, "claude", "mcp-recall-and-injected-context", "cc-1")
    kinds = _by_origin(graph, "cc-1")
    derived = {(a.action_type, a.tool_name) for a in kinds["derived"]}
    # The call and (paired by tool_use_id) its result, which names no tool.
    assert derived == {("tool_call", "mcp__sessions-graph__recall"), ("tool_result", None)}
    result = next(a for a in kinds["derived"] if a.action_type == "tool_result")
    assert result.text.startswith("Recalled for 'orion pooler pgbouncer'")  # fidelity
    assert [a.text for a in kinds["conversation"] if a.action_type == "user_message"] == [
        "What did we decide for the orion pooler?"
    ]

    hits = _hit_ids(graph, "orion pooler pgbouncer transaction mode")
    assert hits, "the conversation is still recalled"
    assert not hits & {a.action_id for a in kinds["derived"]}
    # Nor does the echo stand beside a hit as its neighbour.
    for hit in graph.recall("alice", "orion pooler decide", scope="turns").hits:
        assert "Recalled for" not in hit.text


def test_codex_boilerplate_and_injected_context_stay_out(graph: SessionsGraph) -> None:
    _import(graph, "codex", "mcp-recall-and-injected-context", "cx-1")
    kinds = _by_origin(graph, "cx-1")
    client = [a.text for a in kinds["client"]]
    for opener in (
        "<skills_instructions>",
        "<permissions instructions>",
        "<tools>",
        "# AGENTS.md instructions for",
        "<environment_context>",
    ):
        assert sum(t.startswith(opener) for t in client) == 1, opener
    derived = kinds["derived"]
    assert sum(a.text.startswith("<sessions-graph-memory") for a in derived) == 2
    assert {a.tool_name for a in derived if a.action_type == "tool_call"} == {
        "mcp__sessions_graph__recall"
    }
    result = [a for a in derived if a.action_type == "tool_result"]
    assert len(result) == 1 and "Recalled for 'orion job queue pooler'" in result[0].text

    kept_out = {a.action_id for a in kinds["client"] + derived}
    for query in ("job queue", "pgbouncer", "environment cwd shell timezone", "skills"):
        assert not _hit_ids(graph, query) & kept_out, query
    assert _hit_ids(graph, "orion job queue")  # the user's own question


def test_previews_are_the_conversations_first_request_and_last_answer(
    graph: SessionsGraph,
) -> None:
    _import(graph, "codex", "relevant-past", "cx-2")
    _import(graph, "claude", "slash-command", "cc-2")
    previews = {r["session_id"]: r for r in graph.recent_sessions("alice", project_key="orion")}
    assert previews["cx-2"]["first_user_message"] == "Let's continue with the job queue work."
    assert previews["cx-2"]["last_assistant_message"] == "Ok."
    # A slash command is the client's wrapper and its expansion: no request.
    assert previews["cc-2"]["first_user_message"] is None
    assert previews["cc-2"]["last_assistant_message"] == "Done."


def test_reconciliation_reads_only_the_conversation(graph: SessionsGraph) -> None:
    _import(graph, "codex", "mcp-recall-and-injected-context", "cx-3")
    kinds = _by_origin(graph, "cx-3")
    units = graph.engine.reconcilable_units("cx-3")
    action_units = {u["unit_id"] for u in units if u["unit_kind"] == "action"}
    assert action_units == {action_key("alice", a.action_id) for a in kinds["conversation"]}
    assert not any("sessions-graph-memory" in u["text"] for u in units)


def _record(graph: SessionsGraph, session_id: str, *actions: tuple[str, str, dict]) -> None:
    graph.record_actions(
        session_id,
        [
            {"action_id": f"{session_id}-{n}", "action_type": kind, "text": text, **extra}
            for n, (kind, text, extra) in enumerate(actions)
        ],
        user_id="alice",
    )


def test_a_mixed_message_keeps_its_conversation_part_searchable(graph: SessionsGraph) -> None:
    _record(
        graph,
        "mix",
        (
            "user_message",
            "Please add a zeppelin logo to the README header.\n"
            "<system-reminder>The marmalade task list is empty.</system-reminder>",
            {},
        ),
        ("assistant_message", "Added the logo.", {}),
    )
    (first, _) = graph.get_actions("mix")
    assert first.origin == "conversation" and "marmalade" in first.text  # stored whole
    assert "mix-0" in _hit_ids(graph, "zeppelin logo")
    assert not _hit_ids(graph, "marmalade")  # the reminder is cut out of the index
    preview = graph.recent_sessions("alice")[0]["first_user_message"]
    assert preview == "Please add a zeppelin logo to the README header."
    (unit,) = [
        u
        for u in graph.engine.reconcilable_units("mix")
        if u["unit_id"] == action_key("alice", "mix-0")
    ]
    assert "marmalade" not in unit["text"] and "zeppelin" in unit["text"]


def test_a_result_is_derived_when_its_call_was_in_an_earlier_batch(
    graph: SessionsGraph,
) -> None:
    call = {"tool_name": "mcp__sessions-graph__recall", "tool_use_id": "toolu_9"}
    _record(graph, "split", ("tool_call", '{"query": "kumquat"}', call))
    graph.record_actions(
        "split",
        [
            {
                "action_id": "split-result",
                "action_type": "tool_result",
                "text": "Recalled for 'kumquat': [1] the kumquat cache",
                "tool_use_id": "toolu_9",
            },
            {
                "action_id": "split-other",
                "action_type": "tool_result",
                "text": "kumquat build passed",
                "tool_use_id": "toolu_10",
            },
        ],
        user_id="alice",
    )
    origins = {a.action_id: a.origin for a in graph.get_actions("split")}
    assert origins == {
        "split-0": "derived",
        "split-result": "derived",
        "split-other": "conversation",
    }
    assert _hit_ids(graph, "kumquat") == {"split-other"}


def test_only_the_sessions_own_derived_call_makes_a_result_derived(
    graph: SessionsGraph,
) -> None:
    """Tool-use ids are the client's, not unique across sessions or users: a
    derived call in bob's session never hides alice's result of the same id."""
    call = {"tool_name": "mcp__sessions-graph__recall", "tool_use_id": "toolu_1"}
    graph.record_actions(
        "bobs",
        [{"action_id": "b-0", "action_type": "tool_call", "text": '{"query": "x"}', **call}],
        user_id="bob",
    )
    _record(
        graph, "alices", ("tool_result", "the kumquat build passed", {"tool_use_id": "toolu_1"})
    )

    assert [a.origin for a in graph.get_actions("alices")] == ["conversation"]
    assert _hit_ids(graph, "kumquat") == {"alices-0"}


def test_an_origin_given_by_the_caller_is_kept_and_a_bad_one_refused(
    graph: SessionsGraph,
) -> None:
    from sessions_graph.errors import MemoryValidationError

    _record(graph, "given", ("user_message", "the quince deploy", {"origin": "client"}))
    assert graph.get_actions("given")[0].origin == "client"
    assert not _hit_ids(graph, "quince deploy")
    with pytest.raises(MemoryValidationError, match="origin"):
        _record(graph, "given", ("user_message", "x", {"origin": "echo"}))
    assert len(graph.get_actions("given")) == 1
