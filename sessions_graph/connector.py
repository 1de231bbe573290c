"""``SessionsGraphConnector``: feed agent events into a ``SessionsGraph``.

It accepts this package's events (``sessions_graph.events``) and, unchanged,
the events of Memgraph's Agent Context Graph (``agent_context_graph.events``:
``SessionStartEvent``, ``MessageEvent``, ``ToolStartEvent``, ``ToolEndEvent``,
``SessionEndEvent``). Events are matched by class name and read by field
name, so that package is never imported: it is an optional peer, and one
connector instance can be added to its ``AgentLink`` as is.

What each event does:

* session start: MERGE the user and the session; remember them as active;
* messages, tool calls, tool results: one Action each (idempotent ids);
* turn end: mark the session pending (cheap, no LLM);
* session end: end the session (pending) and, with ``auto_reconcile``, start
  ``sessions-graph reconcile --session ID`` in the background and return.
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

from sessions_graph.hooks.actions import Action, digest, make_action, short
from sessions_graph.hooks.claude import content_text
from sessions_graph.project import project_key

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph

_SESSION_START = {"SessionStartEvent"}
_SESSION_END = {"SessionEndEvent"}
_TURN_END = {"TurnEndEvent"}
_USER = {"UserMessageEvent"}
_ASSISTANT = {"AssistantMessageEvent"}
_MESSAGE = {"MessageEvent"}  # Agent Context Graph: role + content
_TOOL_CALL = {"ToolCallEvent", "ToolStartEvent"}
_TOOL_RESULT = {"ToolResultEvent", "ToolEndEvent"}
SUPPORTED_EVENTS = frozenset(
    _SESSION_START
    | _SESSION_END
    | _TURN_END
    | _USER
    | _ASSISTANT
    | _MESSAGE
    | _TOOL_CALL
    | _TOOL_RESULT
)
_ROLES = {"user": "user_message", "assistant": "assistant_message", "system": "system_message"}


class SessionsGraphConnector:
    """Records agent events as sessions and actions.

    >>> connector = SessionsGraphConnector(graph)
    >>> connector.on_event(SessionStartEvent(session_id="s-1", user_id="alice"))
    >>> graph.save_memory(connector.active_user_id, "...", connector.active_session_id)
    """

    def __init__(self, graph: SessionsGraph, auto_reconcile: bool = False) -> None:
        self._graph = graph
        self._auto_reconcile = auto_reconcile or graph.settings.auto_reconcile
        self._active_user_id: str | None = None
        self._active_session_id: str | None = None
        #: The latest background reconcile process, for callers that want to wait on it.
        self.last_reconcile: subprocess.Popen[bytes] | None = None

    @property
    def active_user_id(self) -> str | None:
        """The user of the session started last (None after it ended)."""
        return self._active_user_id

    @property
    def active_session_id(self) -> str | None:
        """The session started last (None after it ended)."""
        return self._active_session_id

    def supports(self, event: object) -> bool:
        return type(event).__name__ in SUPPORTED_EVENTS

    def on_event(self, event: Any) -> None:
        """Apply one event; unsupported events are ignored."""
        name = type(event).__name__
        session_id = event.session_id if name in SUPPORTED_EVENTS else None
        if name in _SESSION_START:
            self._start(event)
        elif name in _TURN_END:
            self._graph.mark_pending(session_id)  # type: ignore[arg-type]
        elif name in _SESSION_END:
            self._end(session_id)  # type: ignore[arg-type]
        elif session_id is not None:
            action = self._action(name, event)
            if action is not None:
                self._graph.record_actions(session_id, [action], user_id=self._user_for(session_id))

    # -- internals -----------------------------------------------------------
    def _start(self, event: Any) -> None:
        metadata = getattr(event, "metadata", None) or {}
        user_id = getattr(event, "user_id", None) or metadata.get("user_id")
        user_id = user_id or self._graph.settings.user_id
        cwd = getattr(event, "cwd", None) or getattr(event, "working_directory", None)
        key = getattr(event, "project_key", None) or project_key(cwd)
        self._graph.record_session_start(
            event.session_id, user_id=user_id, cwd=cwd, project_key=key
        )
        self._active_user_id, self._active_session_id = user_id, event.session_id

    def _end(self, session_id: str) -> None:
        self._graph.record_session_end(session_id)
        if session_id == self._active_session_id:
            self._active_user_id = self._active_session_id = None
        if self._auto_reconcile:
            from sessions_graph.hooks.spawn import spawn_reconcile

            # For the session's owner, who need not be the configured user.
            owner = self._graph.session_owner(session_id)
            self.last_reconcile = spawn_reconcile(self._graph.settings, session_id, user_id=owner)

    def _user_for(self, session_id: str) -> str | None:
        # None lets the façade use the configured user for a session never started.
        return self._active_user_id if session_id == self._active_session_id else None

    def _action(self, name: str, event: Any) -> Action | None:
        timestamp = _timestamp(getattr(event, "timestamp", None))
        if name in _USER or name in _ASSISTANT or name in _MESSAGE:
            if name in _MESSAGE:
                action_type = _ROLES.get(str(getattr(event, "role", "")).lower(), "user_message")
                text = content_text(getattr(event, "content", None))
            else:
                action_type = "user_message" if name in _USER else "assistant_message"
                text = event.text
            action_id = _id(event, action_type, timestamp, text)
            return make_action(action_id, action_type, text, timestamp)
        tool_use_id = short(getattr(event, "tool_use_id", None))
        tool_name = short(getattr(event, "tool_name", None))
        if name in _TOOL_CALL:
            raw = getattr(event, "tool_input", None)
            text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
            action_id = _id(event, "tool_call", tool_use_id or timestamp, text)
            return make_action(
                action_id,
                "tool_call",
                text,
                timestamp,
                tool_name=tool_name,
                tool_use_id=tool_use_id,
            )
        result = getattr(event, "result", None)
        text = content_text(result) if result is not None else ""
        error = getattr(event, "error_message", None)
        if error and not text:
            text = str(error)
        action_id = _id(event, "tool_result", tool_use_id or timestamp, text)
        return make_action(
            action_id,
            "tool_result",
            text,
            timestamp,
            tool_name=tool_name,
            tool_use_id=tool_use_id,
            is_error=bool(getattr(event, "is_error", False)),
        )


def _timestamp(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else None


def _id(event: Any, kind: str, discriminator: str | None, text: str) -> str:
    """The event's own ``action_id`` if it has one, else a hash of what it says,
    so that the same event delivered twice is stored once."""
    given = getattr(event, "action_id", None)
    if given:
        return str(given)
    key = f"{event.session_id}\0{kind}\0{discriminator or ''}\0{text}"
    return "ev-" + digest(key)
