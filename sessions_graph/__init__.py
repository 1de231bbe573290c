"""sessions-graph: cross-session memory for AI agents, native to Memgraph.

``from sessions_graph import SessionsGraph`` is the whole entry point. Names
are resolved lazily so that importing the package stays cheap for hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sessions_graph.errors import (
        ConfigError,
        InvalidQueryError,
        MemoryFileError,
        MemoryIdTakenError,
        MemoryValidationError,
        ReconciliationNotConfiguredError,
        SessionsGraphError,
        StoreError,
        StoreUnavailableError,
    )
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.models import (
        Action,
        EntityMention,
        Memory,
        RecallHit,
        RecallResult,
        Session,
    )

_LAZY = {
    "SessionsGraph": "sessions_graph.graph",
    "Memory": "sessions_graph.models",
    "Session": "sessions_graph.models",
    "Action": "sessions_graph.models",
    "EntityMention": "sessions_graph.models",
    "RecallHit": "sessions_graph.models",
    "RecallResult": "sessions_graph.models",
    "SessionsGraphError": "sessions_graph.errors",
    "MemoryValidationError": "sessions_graph.errors",
    "MemoryIdTakenError": "sessions_graph.errors",
    "MemoryFileError": "sessions_graph.errors",
    "InvalidQueryError": "sessions_graph.errors",
    "StoreError": "sessions_graph.errors",
    "StoreUnavailableError": "sessions_graph.errors",
    "ConfigError": "sessions_graph.errors",
    "ReconciliationNotConfiguredError": "sessions_graph.errors",
}

__all__ = [
    "Action",
    "ConfigError",
    "EntityMention",
    "InvalidQueryError",
    "Memory",
    "MemoryFileError",
    "MemoryIdTakenError",
    "MemoryValidationError",
    "RecallHit",
    "RecallResult",
    "ReconciliationNotConfiguredError",
    "Session",
    "SessionsGraph",
    "SessionsGraphError",
    "StoreError",
    "StoreUnavailableError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sessions_graph' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
