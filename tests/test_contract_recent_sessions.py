"""``recent_sessions``: where a user left off, on every engine."""

from __future__ import annotations

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.errors import MemoryValidationError


def _session(
    graph: SessionsGraph, sid: str, user: str, project: str | None, turns: list[tuple[str, str]]
) -> None:
    graph.record_session_start(sid, user_id=user, cwd=f"/src/{project}", project_key=project)
    graph.record_actions(
        sid,
        [
            {
                "action_id": f"{sid}-{n}",
                "action_type": kind,
                "text": text,
                "timestamp": f"2026-11-29T10:00:{n:02d}Z",
            }
            for n, (kind, text) in enumerate(turns)
        ],
        user_id=user,
    )


def test_newest_first_with_first_request_and_last_answer(graph: SessionsGraph) -> None:
    _session(graph, "s-old", "alice", "app", [("user_message", "set up the CLI")])
    _session(
        graph,
        "s-new",
        "alice",
        "app",
        [
            ("system_message", "caveat"),
            ("user_message", "use SQLite for the store"),
            ("assistant_message", "Looking at options."),
            ("tool_call", "ls"),
            ("user_message", "and keep WAL"),
            ("assistant_message", "Decided: SQLite with WAL."),
            ("tool_result", "done"),
        ],
    )
    rows = graph.recent_sessions("alice")
    assert [r["session_id"] for r in rows] == ["s-new", "s-old"]
    new = rows[0]
    assert new["user_id"] == "alice" and new["project_key"] == "app" and new["cwd"] == "/src/app"
    assert new["first_user_message"] == "use SQLite for the store"
    assert new["first_user_message_at"] == "2026-11-29T10:00:01.000000+00:00"
    assert new["last_assistant_message"] == "Decided: SQLite with WAL."
    assert new["last_assistant_message_at"] == "2026-11-29T10:00:05.000000+00:00"
    # Their action ids: what the injection ledger notes as shown.
    assert (new["first_user_message_id"], new["last_assistant_message_id"]) == (
        "s-new-1",
        "s-new-5",
    )
    assert new["action_count"] == 7 and new["started_at"]
    old = rows[1]
    assert old["first_user_message"] == "set up the CLI"
    assert old["last_assistant_message"] is None and old["last_assistant_message_at"] is None
    assert old["last_assistant_message_id"] is None


def test_project_filter_limit_paging_and_preview(graph: SessionsGraph) -> None:
    for n in range(4):
        _session(
            graph,
            f"s-{n}",
            "alice",
            "app" if n % 2 == 0 else "web",
            [("user_message", f"request {n} " + "x" * 50), ("assistant_message", f"answer {n}")],
        )
    graph.record_session_start("s-bare", user_id="alice", project_key="app")
    app = graph.recent_sessions("alice", project_key="app")
    assert [r["session_id"] for r in app] == ["s-bare", "s-2", "s-0"]
    assert app[0]["first_user_message"] is None and app[0]["action_count"] == 0
    assert [r["session_id"] for r in graph.recent_sessions("alice", limit=2)] == ["s-bare", "s-3"]
    page = graph.recent_sessions("alice", before=app[1]["started_at"])
    assert [r["session_id"] for r in page] == ["s-1", "s-0"]
    cut = graph.recent_sessions("alice", project_key="web", preview_chars=9)
    assert [r["first_user_message"] for r in cut] == ["request 3", "request 1"]
    assert graph.recent_sessions("alice", project_key="nothing-here") == []


def test_another_users_sessions_never_show(graph: SessionsGraph) -> None:
    _session(graph, "s-a", "alice", "app", [("user_message", "alice's secret plan")])
    _session(graph, "s-b", "bob", "app", [("user_message", "bob's plan")])
    assert [r["session_id"] for r in graph.recent_sessions("alice", project_key="app")] == ["s-a"]
    assert [r["session_id"] for r in graph.recent_sessions("bob")] == ["s-b"]
    assert graph.recent_sessions("carol") == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"user_id": "bad id"},
        {"user_id": "alice", "limit": 0},
        {"user_id": "alice", "before": "yesterday"},
        {"user_id": "alice", "project_key": ""},
        {"user_id": "alice", "preview_chars": 0},
    ],
)
def test_bad_arguments_are_refused(graph: SessionsGraph, kwargs: dict[str, object]) -> None:
    kwargs = dict(kwargs)  # the parameter is shared by every engine's run
    user = kwargs.pop("user_id")
    with pytest.raises(MemoryValidationError):
        graph.recent_sessions(user, **kwargs)  # type: ignore[arg-type]


def test_a_directory_names_the_sessions_in_it_or_below(graph: SessionsGraph) -> None:
    _session(graph, "s-app", "alice", "app", [("user_message", "one")])
    _session(graph, "s-web", "alice", "web", [("user_message", "two")])
    graph.record_session_start("s-elsewhere", user_id="alice", cwd="/srv/tools")
    graph.record_session_start("s-bob", user_id="bob", cwd="/src/app", project_key="app")

    def ids(project: str) -> set[str]:
        return {r["session_id"] for r in graph.recent_sessions("alice", project_key=project)}

    assert ids("app") == {"s-app"}  # a project key, as the SessionStart hook passes
    assert ids("/src/app") == {"s-app"}  # its directory
    assert ids("/src/app/") == {"s-app"}
    assert ids("/src") == {"s-app", "s-web"}  # a directory above projects
    assert ids("/") == {"s-app", "s-web", "s-elsewhere"}
    assert ids("/src/ap") == set()  # a prefix of a name is not a directory


def test_the_last_answer_is_the_latest_whatever_order_the_store_keeps(
    graph: SessionsGraph,
) -> None:
    """The preview's last answer is the session's latest assistant message,
    even when a store lists the session's actions in another order (a graph
    store may give an action recorded later the place of a deleted one)."""
    _session(graph, "s-gone", "alice", "app", [("user_message", "x")] * 6)
    _session(
        graph,
        "s-1",
        "alice",
        "app",
        [("user_message", "which store?"), ("assistant_message", "Looking at options.")],
    )
    graph.forget_session("s-gone")
    graph.record_actions(
        "s-1",
        [
            {"action_id": "s-1-late", "action_type": "user_message", "text": "and WAL?"},
            {"action_id": "s-1-last", "action_type": "assistant_message", "text": "Decided: WAL."},
        ],
        user_id="alice",
    )
    [row] = graph.recent_sessions("alice")
    assert row["first_user_message"] == "which store?"
    assert (row["last_assistant_message"], row["last_assistant_message_id"]) == (
        "Decided: WAL.",
        "s-1-last",
    )
