"""Session digests and memories' projects, on every engine."""

from __future__ import annotations

import json
from typing import Any

from sessions_graph import SessionsGraph
from sessions_graph.clock import utcnow

CWD = "/home/alice/src/orion"


def _work_session(graph: SessionsGraph, sid: str, user: str = "alice", cwd: str = CWD) -> None:
    """A Claude Code session that writes a module, runs a failing test and decides."""
    graph.record_session_start(sid, user_id=user, cwd=cwd, project_key=cwd)
    calls: list[dict[str, Any]] = [
        {"action_type": "user_message", "text": "Add a job queue module to orion."},
        {"action_type": "assistant_message", "text": "I'll add the module."},
        {
            "action_type": "tool_call",
            "tool_name": "Write",
            "tool_use_id": "t1",
            "text": json.dumps({"file_path": f"{cwd}/queue_module.py", "content": "x = 1"}),
        },
        {"action_type": "tool_result", "tool_use_id": "t1", "text": "File created"},
        {
            "action_type": "tool_call",
            "tool_name": "Bash",
            "tool_use_id": "t2",
            "text": json.dumps({"command": "python3 -m pytest -q"}),
        },
        {
            "action_type": "tool_result",
            "tool_use_id": "t2",
            "text": "Exit code 1",
            "is_error": True,
        },
        {
            "action_type": "tool_call",
            "tool_name": "Bash",
            "tool_use_id": "t3",
            "text": '{"command": "ls"}',
        },
        {"action_type": "tool_result", "tool_use_id": "t3", "text": "queue_module.py"},
        {
            "action_type": "assistant_message",
            "text": "The test expects redis. We'll use RQ for the job queue.\n\n"
            "Next steps:\n- make the test pass\n- document the queue",
        },
    ]
    graph.record_actions(
        sid, [{"action_id": f"{sid}-{i}", **a} for i, a in enumerate(calls)], user_id=user
    )


def test_a_digest_is_built_offline_stored_and_read(graph: SessionsGraph) -> None:
    _work_session(graph, "s-work")
    assert graph.session_digest("s-work") is None
    assert graph.build_digest("s-work")
    digest = graph.session_digest("s-work")
    assert digest is not None and digest["source"] == "offline" and digest["substance"]
    assert digest["goal"] == "Add a job queue module to orion."
    assert digest["files"] == [{"path": "queue_module.py", "change": "written"}]
    assert digest["tests"] == [{"command": "python3 -m pytest -q", "failed": True}]
    assert digest["commands"] == [{"command": "ls", "failed": False}]
    assert digest["decisions"] == ["We'll use RQ for the job queue."]
    assert digest["open"] == ["make the test pass", "document the queue"]
    assert not digest["stale"]
    assert '"python3 -m pytest -q" (failed)' in digest["text"]

    graph.record_actions(
        "s-work", [{"action_id": "s-work-late", "action_type": "user_message", "text": "more"}]
    )
    assert graph.session_digest("s-work")["stale"]  # type: ignore[index]


def test_small_talk_has_no_substance(graph: SessionsGraph) -> None:
    graph.record_session_start("s-hi", user_id="alice", cwd=CWD, project_key=CWD)
    graph.record_actions(
        "s-hi",
        [
            {
                "action_id": "hi-0",
                "action_type": "user_message",
                "text": "thanks, that's all for now",
            },
            {"action_id": "hi-1", "action_type": "assistant_message", "text": "Talk soon."},
        ],
    )
    graph.build_digest("s-hi")
    digest = graph.session_digest("s-hi")
    assert digest is not None and digest["substance"] is False


def _llm_digest(graph: SessionsGraph, sid: str, action_count: int) -> dict[str, Any]:
    return {
        "session_id": sid,
        "user_id": "alice",
        "source": "llm",
        "substance": True,
        "body": {"goal": "Queue", "done": ["Wrote the queue"], "decisions": [], "open": []},
        "action_count": action_count,
        "input_hash": "h1",
        "built_at": utcnow(),
    }


def test_an_offline_digest_never_replaces_the_llm_s_of_the_same_content(
    graph: SessionsGraph,
) -> None:
    _work_session(graph, "s-work")
    count = len(graph.get_actions("s-work"))
    assert graph.engine.save_digest(_llm_digest(graph, "s-work", count))
    assert not graph.build_digest("s-work")
    kept = graph.engine.get_digest("s-work")
    assert kept is not None and kept["source"] == "llm" and kept["input_hash"] == "h1"
    assert kept["body"]["done"] == ["Wrote the queue"]
    # New content: the offline digest of it replaces the older LLM one.
    graph.record_actions(
        "s-work", [{"action_id": "w-late", "action_type": "user_message", "text": "and docs"}]
    )
    assert graph.build_digest("s-work")
    assert graph.engine.get_digest("s-work")["source"] == "offline"  # type: ignore[index]


def test_digests_are_the_session_owner_s_only(graph: SessionsGraph) -> None:
    _work_session(graph, "s-alice")
    graph.build_digest("s-alice")
    assert graph.session_digest("s-alice", user_id="bob") is None
    assert graph.session_digest("s-alice", user_id="alice") is not None
    assert graph.engine.session_digests("bob", ["s-alice"]) == []
    assert [d["session_id"] for d in graph.engine.session_digests("alice", ["s-alice"])] == [
        "s-alice"
    ]
    forged = {**_llm_digest(graph, "s-alice", 99), "user_id": "bob"}
    assert not graph.engine.save_digest(forged)
    assert graph.engine.get_digest("s-alice")["source"] == "offline"  # type: ignore[index]


def test_forgetting_a_session_or_user_takes_its_digest(graph: SessionsGraph) -> None:
    _work_session(graph, "s-one")
    _work_session(graph, "s-two")
    _work_session(graph, "s-bob", user="bob")
    for sid in ("s-one", "s-two", "s-bob"):
        graph.build_digest(sid)
    graph.forget_session("s-one")
    assert graph.engine.get_digest("s-one") is None
    graph.forget_user("alice")
    assert graph.engine.get_digest("s-two") is None
    assert graph.engine.get_digest("s-bob") is not None
    # A session recorded again under a forgotten id starts with no digest.
    graph.record_session_start("s-two", user_id="alice")
    assert graph.session_digest("s-two") is None


def test_memories_carry_their_project(graph: SessionsGraph) -> None:
    _work_session(graph, "s-work")
    from_session = graph.save_memory("alice", "Queue uses RQ", session_id="s-work")
    given = graph.save_memory("alice", "Style: black", project_key="github.com/acme/web")
    nowhere = graph.save_memory("alice", "Prefers short answers")
    assert from_session.project_key == CWD
    assert given.project_key == "github.com/acme/web" and nowhere.project_key is None
    stored = {m.memory_id: m.project_key for m in graph.get_memories("alice")}
    assert stored == {
        from_session.memory_id: CWD,
        given.memory_id: "github.com/acme/web",
        nowhere.memory_id: None,
    }
    found = graph.search_memories("alice", "RQ")
    assert [m.project_key for m in found] == [CWD]


def test_sessions_of_the_old_base_name_key_move_to_their_project(graph: SessionsGraph) -> None:
    for sid, cwd in (
        ("a-root", "/w1/clientA/api"),
        ("a-sub", "/w1/clientA/api/src"),
        ("b-root", "/w2/clientB/api"),
        ("a-sibling", "/w1/clientA/api-old"),
    ):
        graph.record_session_start(sid, user_id="alice", cwd=cwd, project_key="api")
    graph.record_session_start("bob-a", user_id="bob", cwd="/w1/clientA/api", project_key="api")
    memory = graph.save_memory("alice", "Client A's queue", session_id="a-root")
    # Saved in that session for another project: not the old key's, it stays.
    other = graph.save_memory(
        "alice", "the web app's port", session_id="a-root", project_key="github.com/acme/web"
    )
    moved = graph.adopt_legacy_project("alice", "api", "/w1/clientA/api", "/w1/clientA/api")
    assert moved == 2
    keys = {
        sid: graph.get_session(sid).project_key
        for sid in ("a-root", "a-sub", "b-root", "a-sibling", "bob-a")
    }  # type: ignore[union-attr]
    assert keys == {
        "a-root": "/w1/clientA/api",
        "a-sub": "/w1/clientA/api",
        "b-root": "api",
        "a-sibling": "api",
        "bob-a": "api",
    }
    assert graph.get_memory(memory.memory_id).project_key == "/w1/clientA/api"  # type: ignore[union-attr]
    assert graph.get_memory(other.memory_id).project_key == "github.com/acme/web"  # type: ignore[union-attr]
    assert graph.adopt_legacy_project("alice", "api", "/w1/clientA/api", "/w1/clientA/api") == 0
