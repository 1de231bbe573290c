"""The real Claude Code CLI: what a session receives from us (our Injected
Context, our MCP ``recall`` tool's answer) and what the client writes into
the transcript (a slash command's wrapper and expansion) never come back in
a later session's request, while the conversation does."""

from __future__ import annotations

from pathlib import Path

from claude_harness import ClaudeCode, request_text, text, tool_use

DECISION = "Decision: the orion database goes through pgbouncer in transaction mode."
RECALL = "mcp__sessions-graph__recall"
MEMORY_OPEN = "<sessions-graph-memory"


def _project(claude_code: ClaudeCode) -> Path:
    root = claude_code.home / "src" / "orion"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    commands = root / ".claude" / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "deploy-notes.md").write_text("Write deploy notes for the pgbouncer rollout.\n")
    return root


def _injected(request: dict) -> list[str]:
    """Each <sessions-graph-memory> element a request carries."""
    sent = request_text(request)
    return [
        MEMORY_OPEN + part.split("</sessions-graph-memory>")[0]
        for part in sent.split(MEMORY_OPEN)[1:]
    ]


def test_a_later_session_gets_no_echo_and_no_client_boilerplate(
    claude_code: ClaudeCode,
) -> None:
    claude_code.env["MCP_CONNECTION_NONBLOCKING"] = "0"  # the MCP server up before request 1
    claude_code.install_hooks()
    project = _project(claude_code)
    api = claude_code.api

    api.then(text(DECISION))
    claude_code.run("Which pooler should the orion database use?", project)

    # Session 2 sees our where-you-left-off block and calls our recall tool.
    api.then(tool_use(RECALL, {"query": "orion pooler pgbouncer"}, tool_id="toolu_recall_1"))
    api.then(text("We chose pgbouncer in transaction mode."))
    claude_code.run("What did we decide for the orion pooler?", project, "--allowedTools", RECALL)
    assert any("where-you-left-off" in b for b in _injected(api.conversation[-2]))
    assert "Recalled for 'orion pooler pgbouncer'" in request_text(api.conversation[-1])

    # Session 3: a slash command, which Claude Code records as its own
    # wrapper and a meta message with the command's text.
    api.then(text("Notes written."))
    claude_code.run("/deploy-notes", project)

    api.then(text("Continuing."))
    claude_code.run("Let's continue with the orion pooler work, pgbouncer included.", project)
    blocks = _injected(api.conversation[-1])
    assert blocks, "the conversation is still injected"
    injected = "\n".join(blocks)
    assert "Which pooler should the orion database use?" in injected  # conversation
    for echo in (
        "Recalled for",  # our tool's answer
        "orion pooler pgbouncer",  # our tool's call
        "<command-name>",  # the client's wrapper
        "<command-message>",
        "Write deploy notes for the pgbouncer rollout",  # the command's expansion
    ):
        assert echo not in injected, echo
    # Our own block's header, once per block: never quoted back inside one.
    assert injected.count("Data from this user's earlier sessions") <= len(blocks)
    for block in blocks:
        assert block.count(MEMORY_OPEN) == 1  # never a block inside a block
