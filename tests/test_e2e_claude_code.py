"""The real Claude Code CLI, with hooks installed by ``sessions-graph install-hooks``.

A first session records a decision; the next session in the same project
must carry it to the model: what is asserted is the request body Claude
Code sent to the (local, scripted) Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path

from claude_harness import ClaudeCode, request_text, text, tool_use

from sessions_graph.engines.sqlite import SQLiteEngine

DECISION = "Decision: the orion cache uses SQLite in WAL mode, not Redis."


def _project(claude_code: ClaudeCode) -> Path:
    root = claude_code.home / "src" / "orion"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    return root


def test_install_hooks_writes_claude_codes_settings(claude_code: ClaudeCode) -> None:
    claude_code.install_hooks()
    settings = json.loads((claude_code.home / ".claude" / "settings.json").read_text())
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
        assert any(c.endswith(" hook") and "sessions" in c for c in commands), event


def test_a_decision_reaches_the_next_sessions_model_request(claude_code: ClaudeCode) -> None:
    claude_code.install_hooks()
    project = _project(claude_code)
    api = claude_code.api

    api.then(text(DECISION))
    first = claude_code.run("Which database should the orion cache use?", project)
    assert DECISION in first.stdout
    assert "sessions-graph-memory" not in request_text(api.conversation[0])  # nothing yet

    store = SQLiteEngine(claude_code.env["SESSIONS_GRAPH_DB"])
    try:
        sessions = store.recent_sessions("alice", str(project), 10, None, 500)
    finally:
        store.close()
    assert len(sessions) == 1
    assert sessions[0]["first_user_message"] == "Which database should the orion cache use?"
    assert sessions[0]["last_assistant_message"] == DECISION
    first_session = sessions[0]["session_id"]

    api.then(text("Continuing."))
    claude_code.run("Let's continue with the cache work.", project / "src")
    sent = request_text(api.conversation[-1])
    assert '<sessions-graph-memory kind="where-you-left-off">' in sent
    assert f"session {first_session}: goal" in sent
    assert '"Which database should the orion cache use?"' in sent
    assert json.dumps(DECISION) in sent
    assert "not instructions" in sent


def test_a_prompt_about_a_past_decision_gets_that_turn(claude_code: ClaudeCode) -> None:
    """UserPromptSubmit: recall on the prompt, above the floor only."""
    claude_code.install_hooks()
    claude_code.env["SESSIONS_GRAPH_INJECT_SESSION_START_TOKENS"] = "0"  # this event alone
    project = _project(claude_code)
    api = claude_code.api

    api.then(text(DECISION))
    claude_code.run("Which database should the orion cache use?", project)
    api.then(text("Noted."))
    claude_code.run("Add a changelog entry for the release.", project)

    api.then(text("SQLite, as decided."))
    claude_code.run("Remind me: what database did we pick for the orion cache?", project)
    sent = request_text(api.conversation[-1])
    assert '<sessions-graph-memory kind="relevant-past">' in sent
    relevant = sent.split('<sessions-graph-memory kind="relevant-past">')[1]
    relevant = relevant.split("</sessions-graph-memory>")[0]
    assert "SQLite in WAL mode" in relevant  # the answer, beside the matched question
    assert "changelog" not in relevant  # below the floor
    assert "where-you-left-off" not in sent  # its budget was 0

    api.then(text("You're welcome."))
    claude_code.run("thanks, go on", project)
    assert "sessions-graph-memory" not in request_text(api.conversation[-1])


RECALL = "mcp__sessions-graph__recall"


def _blocks(sent: str) -> list[str]:
    """The sessions-graph elements in a request's text, each from its tag to its end."""
    return [
        "<sessions-graph-memory" + part.split("</sessions-graph-memory>")[0]
        for part in sent.split("<sessions-graph-memory")[1:]
    ]


def test_the_model_gets_each_item_once_and_the_tool_by_its_real_name(
    claude_code: ClaudeCode,
) -> None:
    """SessionStart shows the decision; the prompt is about the same decision:
    the request carries it once, the notice once, and a footer naming the
    recall tool as Claude Code names it, which the model may then call
    without --allowedTools (install-hooks allowed it)."""
    claude_code.env["MCP_CONNECTION_NONBLOCKING"] = "0"  # tools listed in the first request
    claude_code.install_hooks()
    project = _project(claude_code)
    api = claude_code.api

    api.then(text(DECISION))
    claude_code.run("Which database should the orion cache use?", project)

    api.then(tool_use(RECALL, {"query": "orion cache database"}, tool_id="toolu_recall_e2e"))
    api.then(text("SQLite in WAL mode, as decided."))
    second = claude_code.run("Remind me: which database did the orion cache get?", project)
    assert "SQLite in WAL mode, as decided." in second.stdout

    asked, answered = api.conversation[-2], api.conversation[-1]
    sent = request_text(asked)
    blocks = _blocks(sent)
    assert blocks, sent[-2000:]
    # Nothing twice: the prompt's recall found the decision SessionStart had shown.
    assert sent.count(json.dumps(DECISION)[1:-1]) == 1
    assert sent.count("Which database should the orion cache use?") == 1
    # One-line headers; the notice and the footer once per request.
    for block in blocks:
        assert block.splitlines()[0].startswith('<sessions-graph-memory kind="')
        assert not block.splitlines()[1].startswith("Context recorded")
    ours = "\n".join(blocks)
    assert ours.count("not instructions") == 1
    assert ours.count(f"`{RECALL}`") == 1 and sent.count(f"`{RECALL}`") == 1
    assert "the `recall` tool" not in sent
    # The footer names a tool the model is offered ...
    offered = json.dumps([t.get("name") for t in asked.get("tools", [])]) + sent
    assert RECALL in offered.replace(f"`{RECALL}`", "")
    # ... and may call: permissions.allow holds it, no --allowedTools needed.
    results = [
        block
        for message in answered["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_recall_e2e"
    ]
    assert len(results) == 1 and not results[0].get("is_error"), results
    assert "Recalled for 'orion cache database'" in request_text(
        {"messages": [{"content": results[0]["content"]}]}
    )

    status = claude_code.sessions_graph("status", "--json")
    assert status.returncode == 0, status.stderr
    injected = json.loads(status.stdout)["injected"]
    assert injected["tokens_since"] > 0 and injected["sessions"] >= 1
