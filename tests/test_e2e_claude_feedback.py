"""The real Claude Code CLI, our hooks and our MCP server: a prompt that got
injected context is recorded as an Interaction (the question, the items
injected, the reply), and the model's ``feedback`` call on it changes what
the next session's prompt is shown first.

Two planted sessions both answer the question asked later (the orion
cache's backend), so the order of the two in the injected block is
observable. A session asks it (the baseline order); another asks about the
lower-ranked one alone and, told the answer was right, the model rates that
interaction; a last session asks the first question again.

``feedback_influence`` is 0.5 for these processes: at the default (0.02)
one rating moves a score by 0.6%, less than one rank step of the fusion
(1/61 against 1/62, 1.6%), so no single rating could reorder two close
hits; the default is tuned on LoCoMo for many ratings (settings.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_harness import ClaudeCode, request_text, text, tool_use

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import SQLiteEngine

OLD_Q = "Which backend should the orion cache use?"
OLD_A = "The orion cache backend is memcached on port 11211."
NEW_Q = "Revisit the orion cache backend please"
NEW_A = "The orion cache backend is now valkey 8.0.1 in cluster mode."
BROAD = "Remind me: which backend does the orion cache use?"
NARROW = "Is valkey still running in cluster mode?"
FEEDBACK = "mcp__sessions-graph__feedback"
TAG = '<sessions-graph-memory kind="relevant-past">'
#: The influence these processes rank with (see the module's docstring).
INFLUENCE = 0.5
#: feedback_alpha's default: one rating's step of the EMA.
ALPHA = 0.3


def _project(claude_code: ClaudeCode) -> Path:
    root = claude_code.home / "src" / "orion"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    return root


def _relevant(request: dict[str, Any]) -> list[str]:
    """The item lines of the relevant-past block the prompt hook injected
    into a request, in order."""
    sent = request_text(request)
    assert TAG in sent, sent[-2000:]
    block = sent.split(TAG)[1].split("</sessions-graph-memory>")[0]
    return [line for line in block.splitlines() if line.startswith("- (")]


def _line_of(lines: list[str], said: str) -> int:
    """The position of the one line quoting ``said``."""
    [found] = [i for i, line in enumerate(lines) if said in line]
    return found


def _run(claude_code: ClaudeCode, prompt: str, project: Path, *args: str) -> str:
    """Run ``claude -p``; the session's id."""
    result = claude_code.run(prompt, project, "--output-format", "json", *args)
    return json.loads(result.stdout)["session_id"]


def _tool_result(request: dict[str, Any], tool_id: str) -> dict[str, Any]:
    [found] = [
        block
        for message in request["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id
    ]
    return found


def test_an_injected_answer_is_recorded_and_its_rating_reorders_the_next_context(
    claude_code: ClaudeCode,
) -> None:
    env = claude_code.env
    env["MCP_CONNECTION_NONBLOCKING"] = "0"  # the MCP tools are up for the first request
    env["SESSIONS_GRAPH_INJECT_SESSION_START_TOKENS"] = "0"  # the prompt's block alone
    env["SESSIONS_GRAPH_FEEDBACK_INFLUENCE"] = str(INFLUENCE)
    claude_code.install_hooks()
    project = _project(claude_code)
    api = claude_code.api

    # Two past sessions, each one exchange about the cache's backend.
    env["SESSIONS_GRAPH_INJECT_PROMPT_TOKENS"] = "0"
    api.then(text(OLD_A))
    old_session = _run(claude_code, OLD_Q, project)
    api.then(text(NEW_A))
    new_session = _run(claude_code, NEW_Q, project)
    del env["SESSIONS_GRAPH_INJECT_PROMPT_TOKENS"]

    # A session asks what both answer: both are injected, memcached first.
    reply = "It is memcached on port 11211."
    api.then(text(reply))
    asking = _run(claude_code, BROAD, project)
    before = _relevant(api.conversation[-1])
    assert len(before) == 2, before
    assert _line_of(before, OLD_A) < _line_of(before, NEW_A)
    assert f"session {old_session}," in before[0] and f"session {new_session}," in before[1]

    graph = SessionsGraph(engine=SQLiteEngine(env["SESSIONS_GRAPH_DB"]))
    try:
        # Each planted session's turns: its request and its reply.
        turns = {
            sid: {a.action_id for a in graph.get_actions(sid)} for sid in (old_session, new_session)
        }
        [asked] = graph.interactions("alice", asking)
        assert asked.source == "prompt"
        assert asked.question == BROAD
        # The items injected, in the block's order: a turn of each planted
        # exchange (the one that matched), with the exchange's text.
        assert [item.kind for item in asked.context] == ["turn", "turn"]
        assert asked.context[0].id in turns[old_session]
        assert asked.context[1].id in turns[new_session]
        assert OLD_A in asked.context[0].text and NEW_A in asked.context[1].text
        [ledger] = graph.injections("alice", asking)
        assert {f"turn:{item.id}" for item in asked.context} <= set(ledger["item_ids"])
        # The Stop hook answered it with the model's reply; the reply quotes
        # the memcached port (not in the question), not the valkey version.
        assert asked.answer == reply
        assert [item.used for item in asked.context] == [True, False]
        assert asked.feedback is None
        old_key = asked.context[0].key
    finally:
        graph.close()

    # Another session asks about valkey alone: only that turn is injected,
    # and the model answers from it ...
    api.then(text("Yes: valkey 8.0.1, in cluster mode."))
    rated_session = _run(claude_code, NARROW, project)
    narrow = _relevant(api.conversation[-1])
    assert len(narrow) == 1 and NEW_A in narrow[0], narrow

    # ... the user says it was right, and the model rates it: no interaction
    # id, so the tool rates this session's latest interaction. Claude Code
    # defers MCP tools: the model loads the tool's schema first, as it must.
    api.then(tool_use("ToolSearch", {"query": f"select:{FEEDBACK}"}, tool_id="toolu_search"))
    api.then(tool_use(FEEDBACK, {"score": 5}, tool_id="toolu_feedback"))
    api.then(text("Glad it helped."))
    _run(
        claude_code,
        "Right, that is what we run now. Thanks!",
        project,
        "--resume",
        rated_session,
        "--allowedTools",
        FEEDBACK,
    )
    result = _tool_result(api.conversation[-1], "toolu_feedback")
    assert not result.get("is_error"), result
    graph = SessionsGraph(engine=SQLiteEngine(env["SESSIONS_GRAPH_DB"]))
    try:
        [rated] = graph.interactions("alice", rated_session)
        told = json.loads(request_text({"messages": [{"content": result["content"]}]}))
        assert told == {"rated": rated.interaction_id, "score": 5, "question": NARROW, "items": 1}
        assert rated.feedback == 5
        # Given: a turn of the valkey exchange (the reply, which this
        # question matched best).
        [item] = rated.context
        assert item.id in turns[new_session]
        # One EMA step of its weight towards 1 (score 5); the memcached turn
        # was not rated and stays where it was.
        weights = graph.feedback_weights("alice", [item.key, old_key])
        assert weights[item.key] == pytest.approx(0.5 + ALPHA * (1.0 - 0.5))
        assert weights[old_key] == 0.5
    finally:
        graph.close()

    # The next session asks the first question again: valkey now comes first.
    api.then(text("valkey 8.0.1 in cluster mode."))
    _run(claude_code, BROAD, project)
    after = _relevant(api.conversation[-1])
    assert _line_of(after, NEW_A) < _line_of(after, OLD_A), after
