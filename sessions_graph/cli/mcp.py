"""``sessions-graph mcp``: the stdio MCP server (sessions_graph.agent.mcp_server)."""

from __future__ import annotations

from sessions_graph.cli.common import fail, graph_factory


def mcp() -> None:
    """Serve the agent's memory over MCP on stdin/stdout, for the configured user
    (install-hooks registers it with Claude Code and Codex)."""
    try:
        from sessions_graph.agent.mcp_server import serve
    except ImportError as exc:
        raise fail(str(exc)) from None
    serve(graph_factory())
