"""SessionsGraphConnector on every engine: our events and Agent Context Graph's."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.connector import SessionsGraphConnector
from sessions_graph.events import (
    AssistantMessageEvent,
    SessionEndEvent,
    SessionStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    UserMessageEvent,
)
from sessions_graph.hooks.spawn import reconcile_log_path


def test_a_session_through_our_events(graph: SessionsGraph) -> None:
    connector = SessionsGraphConnector(graph)
    connector.on_event(SessionStartEvent("s-1", user_id="alice", cwd="/home/alice/proj"))
    assert (connector.active_user_id, connector.active_session_id) == ("alice", "s-1")
    events = [
        UserMessageEvent("s-1", "list the files"),
        ToolCallEvent("s-1", "Bash", {"command": "ls"}, tool_use_id="toolu_1"),
        ToolResultEvent("s-1", "README.md", tool_use_id="toolu_1", tool_name="Bash"),
        AssistantMessageEvent("s-1", "There is a README."),
        TurnEndEvent("s-1"),
    ]
    for event in events:
        assert connector.supports(event)
        connector.on_event(event)
    # Delivered twice (at-least-once runtimes): stored once.
    for event in events:
        connector.on_event(event)
    actions = graph.get_actions("s-1")
    assert [a.action_type for a in actions] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]
    assert actions[1].tool_name == "Bash" and actions[1].tool_use_id == "toolu_1"
    assert actions[1].text == '{"command": "ls"}'
    session = graph.get_session("s-1")
    assert session is not None and session.user_id == "alice"
    assert session.project_key == "/home/alice/proj" and session.reconciliation_status == "pending"
    assert "s-1" in [s.session_id for s in graph.pending_sessions()]

    connector.on_event(SessionEndEvent("s-1", reason="exit"))
    ended = graph.get_session("s-1")
    assert ended is not None and ended.ended_at is not None
    assert connector.active_session_id is None and connector.active_user_id is None


def test_explicit_action_ids_and_unknown_events(graph: SessionsGraph) -> None:
    connector = SessionsGraphConnector(graph)
    connector.on_event(SessionStartEvent("s-2", user_id="bob"))
    connector.on_event(UserMessageEvent("s-2", "hi", action_id="msg-1"))
    connector.on_event(UserMessageEvent("s-2", "hi again", action_id="msg-1"))  # same id
    assert [a.text for a in graph.get_actions("s-2")] == ["hi"]

    class HeartbeatEvent:
        session_id = "s-2"

    assert not connector.supports(HeartbeatEvent())
    connector.on_event(HeartbeatEvent())  # ignored
    assert len(graph.get_actions("s-2")) == 1


# -- Agent Context Graph events, as that package defines them (shape only) ----
class EventType(str, Enum):
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    TOOL_START = "tool_start"
    TOOL_END = "tool_end"
    MESSAGE = "message"


@dataclass
class Event:
    event_type: EventType
    session_id: str
    timestamp: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    metadata: dict[str, Any] = field(default_factory=dict)
    source_sdk: str = ""


def _acg(name: str, event_type: EventType, **fields_: Any) -> type:
    annotations = dict.fromkeys(fields_, Any)
    namespace: dict[str, Any] = {"__annotations__": {"event_type": EventType, **annotations}}
    namespace["event_type"] = field(default=event_type, init=False)
    namespace.update(fields_)
    return dataclass(type(name, (Event,), namespace))


AcgSessionStart = _acg(
    "SessionStartEvent", EventType.SESSION_START, model=None, working_directory=None
)
AcgMessage = _acg("MessageEvent", EventType.MESSAGE, role="", content=None, model=None)
AcgToolStart = _acg(
    "ToolStartEvent",
    EventType.TOOL_START,
    tool_name="",
    tool_input=None,
    tool_use_id=None,
    agent_name=None,
)
AcgToolEnd = _acg(
    "ToolEndEvent",
    EventType.TOOL_END,
    tool_name="",
    tool_use_id=None,
    result=None,
    is_error=False,
    error_message=None,
    agent_name=None,
)
AcgSessionEnd = _acg("SessionEndEvent", EventType.SESSION_END, status="completed")


def test_agent_context_graph_events_unchanged(graph: SessionsGraph) -> None:
    connector = SessionsGraphConnector(graph)
    start = AcgSessionStart(
        session_id="acg-1",
        working_directory="/srv/app",
        metadata={"user_id": "carol"},
        source_sdk="claude",
    )
    events = [
        AcgMessage(session_id="acg-1", role="user", content="deploy it"),
        AcgToolStart(
            session_id="acg-1",
            tool_name="Bash",
            tool_input={"cmd": "make deploy"},
            tool_use_id="t1",
        ),
        AcgToolEnd(
            session_id="acg-1",
            tool_name="Bash",
            tool_use_id="t1",
            is_error=True,
            error_message="denied",
        ),
        AcgMessage(
            session_id="acg-1",
            role="assistant",
            content=[{"type": "text", "text": "Deploy was denied."}],
        ),
    ]
    assert all(connector.supports(e) for e in [start, *events])
    connector.on_event(start)
    assert connector.active_user_id == "carol"
    for event in events:
        connector.on_event(event)
    actions = graph.get_actions("acg-1")
    assert [(a.action_type, a.text) for a in actions] == [
        ("user_message", "deploy it"),
        ("tool_call", '{"cmd": "make deploy"}'),
        ("tool_result", "denied"),
        ("assistant_message", "Deploy was denied."),
    ]
    assert actions[2].is_error
    session = graph.get_session("acg-1")
    assert session is not None and session.user_id == "carol" and session.cwd == "/srv/app"
    connector.on_event(AcgSessionEnd(session_id="acg-1"))
    assert graph.get_session("acg-1").ended_at is not None  # type: ignore[union-attr]


def test_auto_reconcile_spawns_a_detached_child_and_returns(
    graph: SessionsGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``on_event`` returns while the child cannot have finished: the child is
    held at interpreter start-up (a ``sitecustomize`` on its PYTHONPATH) until
    this test opens a gate, so the order is proven without timing anything."""
    gate, held = tmp_path / "gate-open", tmp_path / "child-held"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, time\n"
        f"open({str(held)!r}, 'w').close()\n"
        "deadline = time.monotonic() + 120  # never an orphan waiting forever\n"
        f"while not os.path.exists({str(gate)!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
    )
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    )
    log = reconcile_log_path(graph.settings)
    connector = SessionsGraphConnector(graph, auto_reconcile=True)
    connector.on_event(SessionStartEvent("s-r", user_id="alice"))
    connector.on_event(TurnEndEvent("s-r"))
    assert connector.last_reconcile is None  # never on turn end
    connector.on_event(SessionEndEvent("s-r"))
    child = connector.last_reconcile
    assert child is not None
    assert child.poll() is None, "on_event returned while the child is still held at the gate"
    assert child.args[-4:] == ["sessions_graph", "reconcile", "--session", "s-r"]
    gate.touch()
    child.wait(timeout=60)
    assert held.exists(), "the gate was in force (else this test proves nothing)"
    # The child really ran: whatever reconcile says (done, or not configured)
    # went to the log, not to our stdout.
    assert Path(log).read_text().strip()
    session = graph.get_session("s-r")
    assert session is not None and session.ended_at is not None


def test_auto_reconcile_from_settings(graph: SessionsGraph) -> None:
    """The setting alone turns it on: the session it ends gets reconciled by
    the child, and without the setting no child starts."""
    for session_id in ("s-off", "s-on"):
        graph.record_session_start(session_id, user_id="alice")
        graph.record_actions(
            session_id,
            [
                {
                    "action_id": f"{session_id}-0",
                    "action_type": "user_message",
                    "text": "Alice moved the Orion ledger to Postgres.",
                }
            ],
        )
    SessionsGraphConnector(graph).on_event(SessionEndEvent("s-off"))
    graph.settings.auto_reconcile = True
    connector = SessionsGraphConnector(graph)
    connector.on_event(SessionEndEvent("s-on"))
    assert connector.last_reconcile is not None
    assert connector.last_reconcile.wait(timeout=120) == 0
    on, off = graph.get_session("s-on"), graph.get_session("s-off")
    assert on is not None and on.reconciliation_status == "reconciled"
    assert off is not None and off.reconciliation_status == "pending"
