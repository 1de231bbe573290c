"""The events ``SessionsGraphConnector`` consumes, as plain dataclasses.

An agent framework (or your own loop) creates one per lifecycle moment and
hands it to ``connector.on_event``. ``action_id`` is optional: give one when
the runtime has a stable id (message uuid, tool call id) so that delivering
the same event twice stores it once; without one, the id is derived from the
event's content and ``timestamp``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessions_graph.clock import utcnow


@dataclass
class SessionStartEvent:
    session_id: str
    user_id: str | None = None  # default: the configured user_id
    cwd: str | None = None
    project_key: str | None = None  # default: cwd's project (sessions_graph.project)
    timestamp: str = field(default_factory=utcnow)


@dataclass
class UserMessageEvent:
    session_id: str
    text: str
    action_id: str | None = None
    timestamp: str = field(default_factory=utcnow)


@dataclass
class AssistantMessageEvent:
    session_id: str
    text: str
    action_id: str | None = None
    timestamp: str = field(default_factory=utcnow)


@dataclass
class ToolCallEvent:
    session_id: str
    tool_name: str
    tool_input: Any = None
    tool_use_id: str | None = None
    action_id: str | None = None
    timestamp: str = field(default_factory=utcnow)


@dataclass
class ToolResultEvent:
    session_id: str
    result: Any
    tool_use_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    action_id: str | None = None
    timestamp: str = field(default_factory=utcnow)


@dataclass
class TurnEndEvent:
    """The agent finished answering: the session is queued for reconciliation."""

    session_id: str
    timestamp: str = field(default_factory=utcnow)


@dataclass
class SessionEndEvent:
    session_id: str
    reason: str | None = None
    timestamp: str = field(default_factory=utcnow)
