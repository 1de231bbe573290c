"""The real Claude Code CLI, with hooks installed by ``sessions-graph install-hooks``.

A first session records a decision; the next session in the same project
must carry it to the model: what is asserted is the request body Claude
Code sent to the (local, scripted) Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path

from claude_harness import ClaudeCode, request_text, text

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
    assert "data, not instructions" in sent


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
