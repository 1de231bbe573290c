"""The real Claude Code CLI calling our MCP server, registered by
``sessions-graph install-hooks``: the scripted model asks ``recall``, Claude
Code runs ``sessions-graph mcp`` and sends the tool's answer back in its next
request, which must carry what the first session recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_harness import ClaudeCode, request_text, text, tool_use

DECISION = "Decision: the orion cache uses SQLite in WAL mode, not Redis."
RECALL = "mcp__sessions-graph__recall"


def _blocking(claude_code: ClaudeCode) -> None:
    """Claude Code connects MCP servers in the background and, in print mode,
    may send the first request before they are up (offering a
    WaitForMcpServers tool instead); this makes it wait, so the request's
    tool list shows what is registered."""
    claude_code.env["MCP_CONNECTION_NONBLOCKING"] = "0"


def _offered(request: dict[str, Any]) -> str:
    """The tools a request offers the model: their definitions, and the text
    that names deferred ones (Claude Code 2.1.3xx lists MCP tools by name in
    a message and loads their schemas on demand)."""
    return json.dumps([t.get("name") for t in request.get("tools", [])]) + request_text(request)


def _project(claude_code: ClaudeCode) -> Path:
    root = claude_code.home / "src" / "orion"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    return root


def test_the_model_recalls_through_our_mcp_server(claude_code: ClaudeCode) -> None:
    _blocking(claude_code)
    claude_code.install_hooks()
    registered = json.loads((claude_code.home / ".claude.json").read_text())["mcpServers"]
    assert registered["sessions-graph"]["args"][-1] == "mcp"
    project = _project(claude_code)
    api = claude_code.api

    api.then(text(DECISION))
    claude_code.run("Which database should the orion cache use?", project)

    call = tool_use(RECALL, {"query": "orion cache database"}, tool_id="toolu_recall_1")
    api.then(call)
    api.then(text("We chose SQLite in WAL mode."))
    second = claude_code.run(
        "What did we decide for the orion cache?", project, "--allowedTools", RECALL
    )
    assert "We chose SQLite in WAL mode." in second.stdout

    asked, answered = api.conversation[-2], api.conversation[-1]
    for tool in ("recall", "save_memory", "search_memories", "list_sessions", "get_session"):
        assert f"mcp__sessions-graph__{tool}" in _offered(asked), tool
    results = [
        block
        for message in answered["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_recall_1"
    ]
    assert len(results) == 1 and not results[0].get("is_error"), results
    answer = request_text({"messages": [{"content": results[0]["content"]}]})
    assert DECISION in answer and "Recalled for 'orion cache database'" in answer


def test_uninstall_takes_the_server_away(claude_code: ClaudeCode) -> None:
    _blocking(claude_code)
    api = claude_code.api
    project = _project(claude_code)
    api.then(text("First run."))
    claude_code.run("hello", project)  # Claude Code writes its own ~/.claude.json
    own_state = json.loads((claude_code.home / ".claude.json").read_text())
    claude_code.install_hooks()
    removed = claude_code.sessions_graph("uninstall-hooks")
    assert removed.returncode == 0, removed.stderr
    state = json.loads((claude_code.home / ".claude.json").read_text())
    assert "sessions-graph" not in state.get("mcpServers", {})
    assert {k: v for k, v in state.items() if k != "mcpServers"}.keys() >= (
        {k for k in own_state if k != "mcpServers"}
    )
    api.then(text("No memory tools here."))
    claude_code.run("hello again", project)
    assert "mcp__sessions-graph__" not in _offered(api.conversation[-1])


def test_project_scope_registration_is_read_from_the_projects_mcp_json(
    claude_code: ClaudeCode,
) -> None:
    _blocking(claude_code)
    project = _project(claude_code)
    installed = claude_code.sessions_graph("install-hooks", "--project", str(project))
    assert installed.returncode == 0, installed.stderr
    assert not (claude_code.home / ".claude.json").exists()  # nothing at user scope
    api = claude_code.api
    api.then(text("Hello."))
    claude_code.run("hello", project)
    assert "mcp__sessions-graph__recall" in _offered(api.conversation[-1])


def test_a_memory_saved_through_mcp_keeps_its_session_and_project(
    claude_code: ClaudeCode,
) -> None:
    """Claude Code starts our server in the project, naming its session in
    the server's environment: the memory the model saves records both."""
    _blocking(claude_code)
    claude_code.install_hooks()
    project = _project(claude_code)
    save = "mcp__sessions-graph__save_memory"
    claude_code.api.then(tool_use(save, {"content": "Orion pages hold 50 rows"}, tool_id="t_save"))
    claude_code.api.then(text("Saved."))
    claude_code.run("Remember that orion pages hold 50 rows.", project, "--allowedTools", save)
    from sessions_graph.engines.sqlite import SQLiteEngine

    engine = SQLiteEngine(claude_code.env["SESSIONS_GRAPH_DB"])
    [memory] = engine.list_memories("alice", 10)
    sessions = engine.recent_sessions("alice", None, 10, None, 100)
    engine.close()
    assert memory["project_key"] == str(project)
    assert memory["session_id"] == sessions[0]["session_id"]
