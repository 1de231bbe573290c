"""``sessions-graph memory files`` and ``memory versions PATH``: the Memory
Files the Anthropic memory tool keeps, and their kept versions."""

from __future__ import annotations

from sessions_graph.cli.common import echo, emit_json, open_graph
from sessions_graph.cli.params import Argument, Option

_USER = Option(None, "--user", "-u", help="User id (default: the configured user_id).")
_JSON = Option(False, "--json", help="Machine-readable output.")


def files(
    path: str = Argument("/memories", help="A directory (or file) under /memories."),
    user: str = _USER,
    as_json: bool = _JSON,
) -> None:
    """The memory tool's files at or under PATH, by path."""
    from sessions_graph.agent.memory_files import MemoryFiles

    with open_graph() as graph:
        listing = MemoryFiles(graph, user or graph.settings.user_id).listing(path)
    if as_json:
        emit_json(listing)
        return
    for item in listing:
        when = item["updated_at"][:19]
        echo(f"{item['path']}  v{item['version']}  {item['size']} chars  {when}Z")


def versions(
    path: str = Argument(..., help="A file under /memories."),
    user: str = _USER,
    limit: int = Option(20, "--limit", "-n"),
    as_json: bool = _JSON,
) -> None:
    """A memory file's kept versions (the last 20), newest first."""
    from dataclasses import asdict

    from sessions_graph.agent.memory_files import MemoryFiles

    with open_graph() as graph:
        kept = MemoryFiles(graph, user or graph.settings.user_id).versions(path, limit)
    if as_json:
        emit_json([asdict(v) for v in kept])
        return
    for v in kept:
        who = f"  session {v.session_id}" if v.session_id else ""
        first = v.content.split("\n", 1)[0]
        echo(f"v{v.version}  {v.created_at[:19]}Z{who}  {v.path}  {first[:60]}")
