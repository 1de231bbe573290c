"""The real Codex CLI, with hooks and the MCP server installed by
``sessions-graph install-hooks --codex``.

What is asserted is what Codex really did: the request bodies it sent to the
(local, scripted) Responses API, and what our hooks recorded in the store.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from codex_harness import Codex, function_call, message, request_text, tool_search_call

from sessions_graph.engines.sqlite import SQLiteEngine

DECISION = "Decision: the orion cache uses SQLite in WAL mode, not Redis."
#: Codex names an MCP server's tool namespace after the server, "-" made "_".
NAMESPACE = "mcp__sessions_graph"


def _project(codex: Codex) -> Path:
    root = codex.home / "src" / "orion"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    return root


def _sessions(codex: Codex) -> list[dict]:
    path = codex.env["SESSIONS_GRAPH_DB"]
    if not os.path.exists(path):
        return []
    store = SQLiteEngine(path)
    try:
        return store.recent_sessions("alice", str(_project(codex)), 10, None, 500)
    finally:
        store.close()


def _without_codex_on_path(codex: Codex) -> dict[str, str]:
    binary_dir = str(Path(codex.binary).parent)
    path = os.pathsep.join(p for p in codex.env["PATH"].split(os.pathsep) if p != binary_dir)
    return {**codex.env, "PATH": path}


def test_a_decision_reaches_the_next_sessions_model_request(codex: Codex) -> None:
    installed = codex.install_hooks()
    assert "Codex: trusted our 5 hooks" in installed.stdout, installed
    project = _project(codex)
    api = codex.api

    api.then(message(DECISION))
    first = codex.run("Which database should the orion cache use?", project)
    assert DECISION in first.stdout
    assert "sessions-graph-memory" not in request_text(api.conversation[0])  # nothing yet

    sessions = _sessions(codex)  # recorded: the hooks ran without any bypass flag
    assert len(sessions) == 1
    assert sessions[0]["first_user_message"] == "Which database should the orion cache use?"
    assert sessions[0]["last_assistant_message"] == DECISION
    first_session = sessions[0]["session_id"]

    api.then(message("Continuing."))
    codex.run("Let's continue with the cache work.", project / "src")
    sent = request_text(api.conversation[-1])
    assert '<sessions-graph-memory kind="where-you-left-off">' in sent
    assert f"session {first_session}: goal" in sent
    assert json.dumps(DECISION) in sent
    assert "not instructions" in sent


def test_untrusted_hooks_are_reported_and_do_not_run(codex: Codex) -> None:
    """Installed where Codex cannot be asked: install says what to do, status
    says the hooks are not trusted, and Codex indeed skips them."""
    result = codex.sessions_graph_env(_without_codex_on_path(codex), "install-hooks", "--codex")
    assert result.returncode == 0, result.stderr
    assert "could not be trusted" in result.stderr and "/hooks" in result.stderr

    status = codex.sessions_graph("status")
    assert "NOT trusted" in status.stdout, status.stdout
    assert "sessionStart" in status.stdout

    codex.api.then(message(DECISION))
    codex.run("Which database should the orion cache use?", _project(codex))
    assert _sessions(codex) == []  # Codex skipped every hook

    codex.install_hooks()  # codex on PATH again: trusts them
    assert "and trusted" in codex.sessions_graph("status").stdout


def test_the_model_recalls_through_our_mcp_server(codex: Codex) -> None:
    """Codex defers MCP tools behind ``tool_search``; the search must find
    ours in the first turn, and a ``recall`` call must reach our server and
    read the store the hooks wrote."""
    codex.install_hooks()
    project = _project(codex)
    api = codex.api
    api.then(message(DECISION))
    codex.run("Which database should the orion cache use?", project)

    api.then(tool_search_call("recall past sessions memory", call_id="search_1"))
    api.then(function_call("recall", {"query": "orion cache database"}, "call_recall", NAMESPACE))
    api.then(message("We chose SQLite in WAL mode."))
    second = codex.run("What did we decide for the orion cache?", project)
    assert "We chose SQLite in WAL mode." in second.stdout

    searched, called = api.conversation[-2], api.conversation[-1]
    found = [i for i in searched["input"] if i.get("type") == "tool_search_output"]
    assert len(found) == 1, found
    namespaces = {t["name"]: t for t in found[0]["tools"] if t.get("type") == "namespace"}
    offered = {t["name"] for t in namespaces[NAMESPACE]["tools"]}
    assert {"recall", "save_memory", "search_memories", "list_sessions", "get_session"} <= offered
    outputs = [
        i
        for i in called["input"]
        if i.get("type") == "function_call_output" and i.get("call_id") == "call_recall"
    ]
    assert len(outputs) == 1, outputs
    answer = request_text({"input": [outputs[0]]})
    assert "Recalled for 'orion cache database'" in answer and DECISION in answer


def test_uninstall_removes_what_install_added(codex: Codex) -> None:
    before = codex.config.read_text()
    codex.install_hooks()
    assert "mcp_optional_startup_grace_ms" in codex.config.read_text()
    removed = codex.sessions_graph("uninstall-hooks", "--codex")
    assert removed.returncode == 0, removed.stderr
    after = codex.config.read_text()
    assert "[mcp_servers.sessions-graph]" not in after
    assert "mcp_optional_startup_grace_ms" not in after
    assert after.startswith(before)  # the user's own settings, as they were
    codex.api.then(tool_search_call("recall past sessions memory"))
    codex.api.then(message("Nothing."))
    codex.run("hello", _project(codex))
    found = [
        i for i in codex.api.conversation[-1]["input"] if i.get("type") == "tool_search_output"
    ]
    assert found and found[0]["tools"] == []
