"""``sessions-graph mcp`` through the MCP SDK's own client, over stdio, with a
real server process: the tools, their isolation per user, their errors."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from cli_process import CHECKOUT
from mcp import Client, StdioServerParameters

from sessions_graph import SessionsGraph

SCRIPT = str(Path(sys.executable).parent / "sessions-graph")
CACHE_QUESTION = "Which database should the orion cache use?"
DECISION = "Decision: the orion cache uses SQLite in WAL mode, not Redis."
BOBS_DECISION = "Bob's decision: the orion cache uses Redis (bob's secret)."
TOOLS = {
    "recall",
    "save_memory",
    "search_memories",
    "list_sessions",
    "get_session",
    "session_entities",
    "delete_memory",
    "feedback",
}


def _server(tmp_path: Path, db: Path, user: str = "alice") -> StdioServerParameters:
    env = {
        "SESSIONS_GRAPH_DB": str(db),
        "SESSIONS_GRAPH_USER_ID": user,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONDONTWRITEBYTECODE": "1",
        # The tree under test, when it is not the installed one.
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    if os.environ.get("PYTHONPATH"):  # the server runs the code under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(command=SCRIPT, args=["mcp"], env=env)


def session(params: StdioServerParameters, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await work(client)

    return asyncio.run(main())


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def data(result: Any) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Alice's session with 7 turns and a memory; Bob's session and memory."""
    db = tmp_path / "mcp.db"
    with SessionsGraph(db=str(db)) as graph:
        graph.setup()
        graph.record_session_start(
            "s-alice", user_id="alice", cwd="/src/orion", project_key="orion"
        )
        graph.record_actions(
            "s-alice",
            [
                {"action_id": f"a-{i}", "action_type": kind, "text": f"turn {i}"}
                for i, kind in enumerate(["user_message", "assistant_message"] * 3 + ["tool_call"])
            ],
        )
        graph.record_session_start("s-alice-2", user_id="alice", project_key="orion")
        graph.record_actions(
            "s-alice-2",
            [
                {"action_id": "c-0", "action_type": "user_message", "text": CACHE_QUESTION},
                {"action_id": "c-1", "action_type": "assistant_message", "text": DECISION},
            ],
        )
        graph.save_memory("alice", "Alice deploys Orion with blue-green releases", "s-alice")
        graph.record_session_start("s-bob", user_id="bob", project_key="orion")
        graph.record_actions(
            "s-bob",
            [
                {"action_id": "b-1", "action_type": "user_message", "text": "bob's secret"},
                {"action_id": "b-2", "action_type": "assistant_message", "text": BOBS_DECISION},
            ],
        )
        graph.save_memory("bob", "Bob deploys Orion on Fridays (bob's secret)", "s-bob")
    return db


def test_the_tools_are_listed_with_descriptions(tmp_path: Path, store: Path) -> None:
    listed = session(_server(tmp_path, store), lambda c: c.list_tools())
    assert {t.name for t in listed.tools} == TOOLS
    for tool in listed.tools:
        assert len(tool.description or "") > 80, tool.name  # says when to use it
    save = next(t for t in listed.tools if t.name == "save_memory")
    assert save.input_schema["required"] == ["content"]


def test_memories_are_saved_searched_and_deleted_for_the_user_only(
    tmp_path: Path, store: Path
) -> None:
    async def work(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["saved"] = data(await client.call_tool("save_memory", {"content": "Likes tabs"}))
        out["new_session"] = data(
            await client.call_tool(
                "save_memory", {"content": "Uses ruff", "session_id": "s-alice-new"}
            )
        )
        out["search"] = data(await client.call_tool("search_memories", {"query": "orion"}))
        bob_id = "unknown"
        with SessionsGraph(db=str(store)) as graph:
            bob_id = graph.get_memories("bob")[0].memory_id
        out["delete_bobs"] = await client.call_tool("delete_memory", {"memory_id": bob_id})
        own = out["search"][0]["memory_id"]
        out["delete_own"] = data(await client.call_tool("delete_memory", {"memory_id": own}))
        out["again"] = data(await client.call_tool("search_memories", {"query": "orion"}))
        return out

    out = session(_server(tmp_path, store), work)
    assert [m["content"] for m in out["search"]] == ["Alice deploys Orion with blue-green releases"]
    assert out["delete_bobs"].is_error and "not found" in text(out["delete_bobs"])
    assert out["again"] == []
    with SessionsGraph(db=str(store)) as graph:
        assert [m.content for m in graph.get_memories("alice")] == ["Uses ruff", "Likes tabs"]
        assert graph.get_memories("alice")[1].memory_id == out["saved"]["saved"]
        assert graph.session_owner("s-alice-new") == "alice"
        assert len(graph.get_memories("bob")) == 1  # untouched


def test_a_session_is_read_a_page_at_a_time_and_only_the_users(tmp_path: Path, store: Path) -> None:
    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("get_session", {"session_id": "s-alice", "limit": 3}),
            await client.call_tool(
                "get_session", {"session_id": "s-alice", "offset": 6, "limit": 3}
            ),
            await client.call_tool("get_session", {"session_id": "s-bob"}),
            await client.call_tool("session_entities", {"session_id": "s-bob"}),
            await client.call_tool("session_entities", {"session_id": "s-alice"}),
            await client.call_tool("save_memory", {"content": "x", "session_id": "s-bob"}),
        ]

    first, last, bobs, bob_entities, own_entities, into_bobs = session(
        _server(tmp_path, store), work
    )
    page = data(first)
    assert [t["text"] for t in page["turns"]] == ["turn 0", "turn 1", "turn 2"]
    assert [t["type"] for t in page["turns"]] == ["user_message", "assistant_message"] * 1 + [
        "user_message"
    ]
    assert page["next_offset"] == 3 and page["total_turns"] == 7 and page["cwd"] == "/src/orion"
    tail = data(last)
    assert [t["seq"] for t in tail["turns"]] == [6] and tail["next_offset"] is None
    for refused in (bobs, bob_entities, into_bobs):
        assert refused.is_error and "session s-bob not found" in text(refused)
        assert "secret" not in text(refused)
    assert data(own_entities) == []


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(
    tmp_path: Path, store: Path
) -> None:
    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("search_memories", {"query": "title:orion"}),
            await client.call_tool("save_memory", {"content": "   "}),
            await client.call_tool("get_session", {"session_id": "../etc"}),
            await client.call_tool("list_sessions", {"since": "last tuesday"}),
            await client.call_tool("search_memories", {"query": "orion"}),
        ]

    *errors, after = session(_server(tmp_path, store), work)
    for result in errors:
        assert result.is_error
        message = text(result)
        assert "\n" not in message and "Traceback" not in message
    assert "field queries" in text(errors[0])
    assert "empty" in text(errors[1])
    assert "invalid session_id" in text(errors[2])
    assert "ISO 8601" in text(errors[3])
    assert len(data(after)) == 1


def test_a_store_that_cannot_be_opened_is_an_error_per_call(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    params = _server(tmp_path, tmp_path / "file" / "nested.db")

    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("search_memories", {"query": "orion"}),
            await client.call_tool("save_memory", {"content": "still here"}),
        ]

    for result in session(params, work):
        assert result.is_error and "cannot open database" in text(result)


def test_the_server_acts_for_the_configured_user(tmp_path: Path, store: Path) -> None:
    params = _server(tmp_path, store, user="bob")
    found = session(params, lambda c: c.call_tool("search_memories", {"query": "orion"}))
    assert [m["content"] for m in data(found)] == ["Bob deploys Orion on Fridays (bob's secret)"]
    assert os.environ.get("SESSIONS_GRAPH_USER_ID") is None  # nothing leaked into the test


def test_recall_answers_from_the_users_past_sessions_only(tmp_path: Path, store: Path) -> None:
    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("recall", {"query": "which database for the orion cache"}),
            await client.call_tool(
                "recall", {"query": "orion cache", "scope": "memories", "max_tokens": 200}
            ),
            await client.call_tool("recall", {"query": "orion", "since": "yesterday-ish"}),
            await client.call_tool("recall", {"query": "orion", "scope": "everything"}),
        ]

    turns, memories, bad_date, bad_scope = session(_server(tmp_path, store), work)
    assert not turns.is_error, text(turns)
    recalled = text(turns)
    assert DECISION in recalled and "session s-alice-2" in recalled
    assert "Redis (bob" not in recalled and "secret" not in recalled
    assert "blue-green" in text(memories) and DECISION not in text(memories)
    assert bad_date.is_error and "\n" not in text(bad_date)
    # The schema lists the scopes; the SDK refuses others before the tool runs.
    assert bad_scope.is_error and "'all', 'turns', 'memories' or 'entities'" in text(bad_scope)


def test_without_the_mcp_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    """The SDK made unimportable, as in an install without the extra."""
    import subprocess

    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['sessions-graph', 'mcp'];"
        " from sessions_graph.__main__ import main; main()"
    )
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "x.db")}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert f"pip install '{CHECKOUT}[mcp]'" in result.stderr


def test_list_sessions_by_project_and_time(tmp_path: Path, store: Path) -> None:
    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("list_sessions", {"project": "orion"}),
            await client.call_tool("list_sessions", {"project": "elsewhere"}),
            await client.call_tool("list_sessions", {"since": "2999-01-01"}),
            await client.call_tool("list_sessions", {"until": "2000-01-01T00:00:00Z"}),
            await client.call_tool("list_sessions", {"limit": 1}),
            await client.call_tool("list_sessions", {"project": "/src/orion"}),
            await client.call_tool("list_sessions", {"project": "/"}),
        ]

    orion, elsewhere, future, past, one, directory, root = session(_server(tmp_path, store), work)
    listed = data(orion)
    assert [s["session_id"] for s in listed] == ["s-alice-2", "s-alice"]  # newest first
    assert listed[0]["first_request"] == CACHE_QUESTION
    assert listed[0]["last_answer"] == DECISION
    assert listed[1]["first_request"] == "turn 0" and listed[1]["actions"] == 7
    assert data(elsewhere) == [] and data(future) == [] and data(past) == []
    assert [s["session_id"] for s in data(one)] == ["s-alice-2"]
    assert "s-bob" not in text(orion)
    # A directory names the sessions run in it or below it (s-alice-2 has no cwd).
    assert [s["session_id"] for s in data(directory)] == ["s-alice"]
    assert [s["session_id"] for s in data(root)] == ["s-alice"]


GHP = "ghp_" + "Abcdefghijklmnopqrstuvwxyz0123456789"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"


def test_old_unredacted_text_is_redacted_on_every_read(tmp_path: Path) -> None:
    """A store written before action redaction existed holds secrets in clear
    (planted here with SQL, under the façade): every tool that shows stored
    text redacts it, as recall does. Memories are stored as written, so a
    secret in one is planted through the façade."""
    import sqlite3

    db = tmp_path / "old.db"
    leaky = f"deploy with {GHP} and key {AWS_ID}"
    straddling = "x" * 280 + f" {GHP}"  # a token across the preview's end
    with SessionsGraph(db=str(db)) as graph:
        graph.setup()
        graph.record_session_start("s-old", user_id="alice", project_key="orion")
        graph.record_actions(
            "s-old",
            [
                {"action_id": "o-0", "action_type": "user_message", "text": "placeholder"},
                {"action_id": "o-1", "action_type": "tool_call", "text": "placeholder"},
                {"action_id": "o-2", "action_type": "assistant_message", "text": "placeholder"},
            ],
        )
        graph.save_memory("alice", f"The orion deploy token is {GHP}", "s-old")
    with sqlite3.connect(db) as conn:
        for action_id, old_text in (("o-0", leaky), ("o-1", leaky), ("o-2", straddling)):
            conn.execute(
                "UPDATE actions SET text = ?, redactions = 0 WHERE action_id = ?",
                (old_text, action_id),
            )

    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("get_session", {"session_id": "s-old"}),
            await client.call_tool("list_sessions", {}),
            await client.call_tool("search_memories", {"query": "orion deploy"}),
            await client.call_tool("recall", {"query": "orion deploy token"}),
        ]

    results = session(_server(tmp_path, db), work)
    turns, listed, memories, recalled = (text(r) for r in results)
    assert "[REDACTED:github_token]" in turns and "[REDACTED:aws_access_key]" in turns
    assert "[REDACTED:" in listed and "[REDACTED:" in memories and "[REDACTED:" in recalled
    assert len(data(results[0])["turns"]) == 3 and len(data(results[2])) == 1
    for shown in (turns, listed, memories, recalled):
        assert GHP[:10] not in shown and AWS_ID not in shown, shown


def test_a_memory_keeps_the_session_and_project_it_was_saved_in(
    tmp_path: Path, store: Path
) -> None:
    """The client names its session in the server's environment, and starts
    the server in the project; a saved memory records both. Another user's
    session named there is not taken."""
    project = tmp_path / "w2" / "clientB" / "api"
    (project / ".git").mkdir(parents=True)

    def started(session_id: str) -> StdioServerParameters:
        params = _server(tmp_path, store)
        params.env = {**(params.env or {}), "CLAUDE_CODE_SESSION_ID": session_id}
        params.cwd = project
        return params

    async def save(client: Client) -> Any:
        return data(await client.call_tool("save_memory", {"content": "Pages hold 50 rows"}))

    with SessionsGraph(db=str(store)) as graph:
        graph.record_session_start(
            "s-here", user_id="alice", cwd=str(project), project_key=str(project)
        )
    here = session(started("s-here"), save)
    bobs = session(started("s-bob"), save)
    assert here["session_id"] == "s-here" and here["project"] == "api"
    assert bobs["session_id"] is None and bobs["project"] == "api"
    with SessionsGraph(db=str(store)) as graph:
        saved = graph.get_memory(here["saved"])
        assert saved is not None and (saved.session_id, saved.project_key) == (
            "s-here",
            str(project),
        )
        loose = graph.get_memory(bobs["saved"])
        assert loose is not None and (loose.session_id, loose.project_key) == (None, str(project))


def test_get_session_returns_its_digest(tmp_path: Path, store: Path) -> None:
    with SessionsGraph(db=str(store)) as graph:
        graph.build_digest("s-alice-2")

    async def work(client: Client) -> list[Any]:
        return [
            data(await client.call_tool("get_session", {"session_id": "s-alice-2"})),
            data(await client.call_tool("get_session", {"session_id": "s-alice"})),
        ]

    built, none = session(_server(tmp_path, store), work)
    assert built["digest"]["goal"] == CACHE_QUESTION and built["digest"]["source"] == "offline"
    assert built["digest"]["decisions"] == [DECISION]
    assert none["digest"] is None


def test_a_call_in_progress_does_not_hold_up_the_others(store: Path) -> None:
    """The SDK runs tools in worker threads: while one call holds its graph
    (a slow recall), another (save_memory) is served on a graph of its own,
    not queued behind it."""
    import threading

    from sessions_graph.agent.mcp_server import MemoryServer

    tools = MemoryServer(lambda: SessionsGraph(db=str(store)), user_id="alice")
    holding, release = threading.Event(), threading.Event()

    def slow_call() -> None:
        with tools.graph():
            holding.set()
            release.wait(60)

    slow = threading.Thread(target=slow_call)
    slow.start()
    assert holding.wait(30)
    saved: list[str] = []
    fast = threading.Thread(target=lambda: saved.append(tools.save_memory("Prefers tabs")))
    fast.start()
    fast.join(30)  # a deadlock guard, not a speed goal: before, this waited for `release`
    finished = not fast.is_alive()
    release.set()
    slow.join()
    fast.join()
    tools.close()
    assert finished and json.loads(saved[0])["saved"]
    with SessionsGraph(db=str(store)) as graph:
        assert "Prefers tabs" in {m.content for m in graph.get_memories("alice")}
