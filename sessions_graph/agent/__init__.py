"""Memory handed back to the agent: tools an agent calls itself.

* ``sessions_graph.agent.mcp_server``: ``sessions-graph mcp``, a stdio MCP
  server (needs the ``mcp`` extra);
* ``sessions_graph.agent.memory_tool``: ``SessionsGraphMemoryTool``, a backend
  for the Anthropic SDK's memory tool (needs the ``memory-tool`` extra);
* ``sessions_graph.agent.memory_files``: the Memory Files both rest on, with
  no SDK of its own.

Names are resolved lazily: importing this package loads no SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sessions_graph.agent.memory_files import MemoryFiles
    from sessions_graph.agent.memory_tool import SessionsGraphMemoryTool

_LAZY = {
    "MemoryFiles": "sessions_graph.agent.memory_files",
    "SessionsGraphMemoryTool": "sessions_graph.agent.memory_tool",
}

__all__ = ["MemoryFiles", "SessionsGraphMemoryTool"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sessions_graph.agent' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
