"""The Anthropic memory tool on sessions-graph (``SessionsGraphMemoryTool``)
and the memory-file engine operations under it, on every engine."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from sessions_graph import MemoryValidationError, SessionsGraph
from sessions_graph.agent import MemoryFiles, SessionsGraphMemoryTool
from sessions_graph.agent.memory_files import KEEP_VERSIONS
from sessions_graph.validation import MAX_CONTENT_BYTES


def _tool(graph: SessionsGraph, user: str = "alice", session: str | None = "s-1") -> Any:
    return SessionsGraphMemoryTool(graph, user_id=user, session_id=session)


def run(tool: Any, command: str, **args: Any) -> str:
    """One command as the SDK's runner hands it over (the model's JSON input)."""
    return tool.call({"command": command, **args})


def test_create_view_and_list(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    assert run(tool, "create", path="/memories/prefs.md", file_text="tabs\nno emoji\n") == (
        "File created successfully at: /memories/prefs.md"
    )
    run(tool, "create", path="/memories/projects/orion/notes.md", file_text="Orion ships Friday")
    view = run(tool, "view", path="/memories/prefs.md")
    assert view.splitlines()[1:] == ["     1\ttabs", "     2\tno emoji", "     3\t"]
    ranged = run(tool, "view", path="/memories/prefs.md", view_range=[2, 2])
    assert ranged.splitlines()[1:] == ["     2\tno emoji"]
    tail = run(tool, "view", path="/memories/prefs.md", view_range=[2, 99])
    assert tail.splitlines()[1:] == ["     2\tno emoji", "     3\t"]
    with pytest.raises(ToolError, match="has 3 lines"):
        run(tool, "view", path="/memories/prefs.md", view_range=[4, 5])
    listing = run(tool, "view", path="/memories")
    paths = [line.split("\t")[1] for line in listing.splitlines()[1:]]
    # Two levels deep: the notes file three levels down shows as its directory.
    assert paths == [
        "/memories",
        "/memories/prefs.md",
        "/memories/projects/",
        "/memories/projects/orion/",
    ]
    sub = run(tool, "view", path="/memories/projects/orion/")
    assert sub.splitlines()[-1] == "18\t/memories/projects/orion/notes.md"
    with pytest.raises(ToolError, match="already exists"):
        run(tool, "create", path="/memories/prefs.md", file_text="again")
    with pytest.raises(ToolError, match="does not exist"):
        run(tool, "view", path="/memories/nothing.md")
    bob = _tool(graph, "bob", None)
    assert run(bob, "view", path="/memories").splitlines()[1:] == ["0\t/memories"]


def test_a_file_is_a_memory_searched_and_recalled_like_any(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    run(tool, "create", path="/memories/coffee.md", file_text="Alice drinks espresso daily")
    found = graph.search_memories("alice", "espresso")
    assert [m.content for m in found] == ["Alice drinks espresso daily"]
    assert found[0].session_id == "s-1"
    file = tool.get("/memories/coffee.md")
    assert file is not None and file.memory_id == found[0].memory_id and file.version == 1
    assert graph.get_memories_for_session("s-1")[0].memory_id == file.memory_id
    assert graph.search_memories("bob", "espresso") == []
    run(tool, "str_replace", path="/memories/coffee.md", old_str="espresso", new_str="tea")
    assert graph.search_memories("alice", "espresso") == []
    assert [m.content for m in graph.search_memories("alice", "tea")] == ["Alice drinks tea daily"]
    recalled = graph.recall("alice", "what does alice drink daily").render(400)
    assert "Alice drinks tea daily" in recalled
    assert "Alice drinks tea" not in graph.recall("bob", "what does alice drink").render(400)
    run(tool, "delete", path="/memories/coffee.md")
    assert graph.get_memories("alice") == []


def test_str_replace(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    run(tool, "create", path="/memories/a.md", file_text="one\ntwo\nthree\ntwo\n")
    with pytest.raises(ToolError, match=r"appears 2 times \(lines 2, 4\)"):
        run(tool, "str_replace", path="/memories/a.md", old_str="two", new_str="2")
    with pytest.raises(ToolError, match="does not appear"):
        run(tool, "str_replace", path="/memories/a.md", old_str="four", new_str="4")
    out = run(tool, "str_replace", path="/memories/a.md", old_str="three", new_str="3")
    assert "     3\t3" in out.splitlines()
    assert tool.get("/memories/a.md").content == "one\ntwo\n3\ntwo\n"
    assert tool.get("/memories/a.md").version == 2
    with pytest.raises(ToolError, match="does not exist"):
        run(tool, "str_replace", path="/memories/none.md", old_str="a", new_str="b")


def test_insert(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    run(tool, "create", path="/memories/list.md", file_text="b\nc\n")
    run(tool, "insert", path="/memories/list.md", insert_line=0, insert_text="a\n")
    run(tool, "insert", path="/memories/list.md", insert_line=3, insert_text="d")
    assert tool.get("/memories/list.md").content == "a\nb\nc\nd\n"
    with pytest.raises(ToolError, match="Invalid insert_line 9"):
        run(tool, "insert", path="/memories/list.md", insert_line=9, insert_text="x")
    assert tool.get("/memories/list.md").version == 3


def test_delete_a_file_or_a_directory(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    for name in ("x/1.md", "x/2.md", "x/y/3.md", "xz.md"):
        run(tool, "create", path=f"/memories/{name}", file_text=name)
    assert run(tool, "delete", path="/memories/x/") == "Successfully deleted /memories/x (3 files)"
    assert [f["path"] for f in tool.files.listing()] == ["/memories/xz.md"]
    with pytest.raises(ToolError, match="does not exist"):
        run(tool, "delete", path="/memories/x")
    with pytest.raises(ToolError, match="cannot be deleted"):
        run(tool, "delete", path="/memories")
    assert [m.content for m in graph.get_memories("alice")] == ["xz.md"]


def test_rename_a_file_or_a_directory(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    run(tool, "create", path="/memories/old/a.md", file_text="A")
    run(tool, "create", path="/memories/old/sub/b.md", file_text="B")
    run(tool, "create", path="/memories/taken.md", file_text="T")
    run(tool, "rename", old_path="/memories/old", new_path="/memories/new")
    paths = [f["path"] for f in tool.files.listing()]
    assert paths == ["/memories/new/a.md", "/memories/new/sub/b.md", "/memories/taken.md"]
    run(tool, "rename", old_path="/memories/new/a.md", new_path="/memories/a2.md")
    assert tool.get("/memories/a2.md").content == "A"
    for old, new, message in [
        ("/memories/a2.md", "/memories/taken.md", "already exists"),
        ("/memories/a2.md", "/memories/new", "already exists"),
        ("/memories/a2.md", "/memories/taken.md/inner.md", "parent of"),
        ("/memories/new", "/memories/new/deeper", "into itself"),
        ("/memories/ghost.md", "/memories/g2.md", "does not exist"),
    ]:
        with pytest.raises(ToolError, match=message):
            run(tool, "rename", old_path=old, new_path=new)
    assert [f["path"] for f in tool.files.listing()] == [
        "/memories/a2.md",
        "/memories/new/sub/b.md",
        "/memories/taken.md",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "memories/a.md",
        "/memoriesX/a.md",
        "/memories/../etc/passwd",
        "/memories/a/../../b",
        "/memories/./a.md",
        "/memories//a.md",
        "/memories/a\\b.md",
        "/memories/a\x00.md",
        "",
    ],
)
def test_paths_outside_memories_or_with_traversal_are_refused(
    graph: SessionsGraph, path: str
) -> None:
    tool = _tool(graph)
    with pytest.raises(ToolError):
        run(tool, "create", path=path, file_text="x")
    with pytest.raises(ToolError):
        run(tool, "view", path=path)
    assert graph.get_memories("alice") == []


def test_oversized_and_empty_files_are_refused(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    with pytest.raises(ToolError, match="at most"):
        run(tool, "create", path="/memories/big.md", file_text="x" * (MAX_CONTENT_BYTES + 1))
    with pytest.raises(ToolError, match="empty"):
        run(tool, "create", path="/memories/empty.md", file_text="  ")
    run(tool, "create", path="/memories/grow.md", file_text="x" * (MAX_CONTENT_BYTES - 10))
    with pytest.raises(ToolError, match="at most"):
        run(tool, "insert", path="/memories/grow.md", insert_line=1, insert_text="y" * 20)
    assert tool.get("/memories/grow.md").version == 1
    assert [m.content[:1] for m in graph.get_memories("alice")] == ["x"]


def test_the_newest_versions_are_kept_with_their_sessions(graph: SessionsGraph) -> None:
    tool = _tool(graph, session="s-1")
    run(tool, "create", path="/memories/log.md", file_text="v1")
    later = _tool(graph, session="s-2")
    for n in range(2, 26):
        run(later, "str_replace", path="/memories/log.md", old_str=f"v{n - 1}", new_str=f"v{n}")
    versions = tool.versions("/memories/log.md")
    assert len(versions) == KEEP_VERSIONS == 20
    assert [v.version for v in versions] == list(range(25, 5, -1))
    assert [v.content for v in versions[:2]] == ["v25", "v24"]
    assert {v.session_id for v in versions} == {"s-2"}
    assert tool.get("/memories/log.md").session_id == "s-1"  # the Memory: who created it
    run(later, "rename", old_path="/memories/log.md", new_path="/memories/journal.md")
    newest = tool.versions("/memories/journal.md", limit=2)
    assert [(v.version, v.path, v.content) for v in newest] == [
        (26, "/memories/journal.md", "v25"),
        (25, "/memories/log.md", "v25"),
    ]
    # The next edit is the next version: a rename counts as one.
    run(later, "str_replace", path="/memories/journal.md", old_str="v25", new_str="v26")
    assert [v.version for v in tool.versions("/memories/journal.md", limit=3)] == [27, 26, 25]
    first = _tool(graph, session=None)
    run(first, "create", path="/memories/nosession.md", file_text="n")
    assert first.versions("/memories/nosession.md")[0].session_id is None
    with pytest.raises(MemoryValidationError, match="does not exist"):
        tool.versions("/memories/log.md")


def test_editing_a_file_never_touches_another_users_file_at_the_same_path(
    graph: SessionsGraph,
) -> None:
    """Same path, same version, two users: alice's edits (enough to prune her
    old versions) leave bob's file, its version and its history alone."""
    alice, bob = _tool(graph, "alice", "s-a"), _tool(graph, "bob", "s-b")
    run(alice, "create", path="/memories/notes.md", file_text="a1")
    run(bob, "create", path="/memories/notes.md", file_text="b1")
    for n in range(2, KEEP_VERSIONS + 3):
        run(alice, "str_replace", path="/memories/notes.md", old_str=f"a{n - 1}", new_str=f"a{n}")

    assert bob.get("/memories/notes.md").content == "b1"
    assert [(v.version, v.content) for v in bob.versions("/memories/notes.md")] == [(1, "b1")]
    run(bob, "str_replace", path="/memories/notes.md", old_str="b1", new_str="b2")
    assert [v.version for v in bob.versions("/memories/notes.md")] == [2, 1]


def test_editing_a_file_never_touches_the_users_other_files(graph: SessionsGraph) -> None:
    """Two of alice's files at the same version: a write to one moves only its
    version, and the other takes its own next write at the version it had."""
    files = MemoryFiles(graph, "alice")
    files.create("/memories/a.md", "a1")
    files.create("/memories/b.md", "b1")
    engine = graph.engine
    written = engine.write_memory_file("alice", "/memories/b.md", "b2", None, "t", 1, 20)
    assert written is not None and written["content"] == "b2"
    assert files.read("/memories/a.md").content == "a1"
    assert [v.version for v in files.versions("/memories/a.md")] == [1]
    again = engine.write_memory_file("alice", "/memories/a.md", "a2", None, "t", 1, 20)
    assert again is not None and again["version"] == 2
    assert files.read("/memories/b.md").content == "b2"


def test_users_are_isolated(graph: SessionsGraph) -> None:
    alice, bob = _tool(graph, "alice", "s-a"), _tool(graph, "bob", "s-b")
    run(alice, "create", path="/memories/secret.md", file_text="alice's secret")
    run(bob, "create", path="/memories/secret.md", file_text="bob's own")
    assert bob.get("/memories/secret.md").content == "bob's own"
    with pytest.raises(ToolError, match="does not exist"):
        run(bob, "view", path="/memories/alice.md")
    run(bob, "delete", path="/memories/secret.md")
    assert alice.get("/memories/secret.md").content == "alice's secret"
    # A session of another user is never joined by a write.
    intruder = _tool(graph, "bob", "s-a")
    with pytest.raises(ToolError, match="'s-a' not found for user 'bob'"):
        run(intruder, "create", path="/memories/x.md", file_text="x")
    assert bob.files.listing() == []


def test_clear_all_memory_deletes_only_the_users_files(graph: SessionsGraph) -> None:
    tool = _tool(graph)
    run(tool, "create", path="/memories/a.md", file_text="a")
    graph.save_memory("alice", "a plain memory")
    bob = _tool(graph, "bob", None)
    run(bob, "create", path="/memories/a.md", file_text="b")
    assert tool.clear_all_memory() == "All memory cleared"
    assert [m.content for m in graph.get_memories("alice")] == ["a plain memory"]
    assert bob.get("/memories/a.md") is not None


# -- the engine operations' own contract -----------------------------------------------
def test_a_write_on_a_stale_version_changes_nothing(graph: SessionsGraph) -> None:
    files = MemoryFiles(graph, "alice")
    files.create("/memories/n.md", "first")
    engine = graph.engine
    written = engine.write_memory_file(
        "alice", "/memories/n.md", "second", None, "2026-01-01T00:00:00.000000+00:00", 1, 20
    )
    assert written is not None and written["version"] == 2 and written["content"] == "second"
    stale = engine.write_memory_file(
        "alice", "/memories/n.md", "third", None, "2026-01-01T00:00:01.000000+00:00", 1, 20
    )
    assert stale is None
    assert files.read("/memories/n.md").content == "second"
    assert engine.write_memory_file("bob", "/memories/n.md", "x", None, "t", 2, 20) is None


def test_create_reports_what_is_in_the_way(graph: SessionsGraph) -> None:
    engine = graph.engine
    files = MemoryFiles(graph, "alice")
    files.create("/memories/d/f.md", "f")

    def memory(n: int) -> dict[str, Any]:
        now = "2026-01-01T00:00:00.000000+00:00"
        return {
            "memory_id": f"m-{n}",
            "user_id": "alice",
            "content": "c",
            "session_id": None,
            "created_at": now,
            "updated_at": now,
        }

    assert engine.create_memory_file(memory(1), "/memories/d/f.md", ["/memories/d"], 20) == "exists"
    assert engine.create_memory_file(memory(2), "/memories/d", [], 20) == "directory"
    assert (
        engine.create_memory_file(
            memory(3), "/memories/d/f.md/g.md", ["/memories/d", "/memories/d/f.md"], 20
        )
        == "parent"
    )
    assert graph.get_memory("m-1") is None and graph.get_memory("m-3") is None
    assert engine.create_memory_file(memory(4), "/memories/d/g.md", ["/memories/d"], 20) == (
        "created"
    )


def test_forgetting_a_user_takes_their_files(graph: SessionsGraph) -> None:
    tool = _tool(graph, "alice", "s-1")
    run(tool, "create", path="/memories/a.md", file_text="a")
    run(tool, "str_replace", path="/memories/a.md", old_str="a", new_str="b")
    graph.forget_user("alice")
    assert tool.get("/memories/a.md") is None
    assert tool.files.listing() == []
    run(tool, "create", path="/memories/a.md", file_text="fresh")
    assert [v.version for v in tool.versions("/memories/a.md")] == [1]


def test_actions_come_a_page_at_a_time(graph: SessionsGraph) -> None:
    graph.record_actions(
        "s-1",
        [{"action_id": f"a{i}", "action_type": "user_message", "text": f"t{i}"} for i in range(7)],
        user_id="alice",
    )
    engine = graph.engine
    assert [a["action_id"] for a in engine.get_actions_page("s-1", 0, 3)] == ["a0", "a1", "a2"]
    assert [a["action_id"] for a in engine.get_actions_page("s-1", 5, 3)] == ["a5", "a6"]
    assert engine.get_actions_page("s-1", 7, 3) == []
    assert engine.get_actions_page("s-1", 2, 1)[0]["seq"] == 2
    assert engine.get_actions_page("s-unknown", 0, 3) == []
