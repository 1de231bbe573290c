"""``sessions-graph memory add|list|search|update|delete``."""

from __future__ import annotations

from typing import Any

from sessions_graph.cli.common import (
    echo,
    emit_json,
    fail,
    open_graph,
    owned_session,
    say_nothing_stored,
)
from sessions_graph.cli.params import Argument, Option
from sessions_graph.validation import MAX_LIMIT

_USER = Option(None, "--user", "-u", help="User id (default: the configured user_id).")
_JSON = Option(False, "--json", help="Machine-readable output.")


def _show(memories: list[dict[str, Any]], as_json: bool) -> None:
    """Print memories read as plain records (``plain=True``: no pydantic)."""
    # Memories are stored as written: what is shown is redacted, as every
    # other read path does (a secret pasted into one is not put on screen).
    from sessions_graph.redact import redact

    if as_json:
        rows = [{k: v for k, v in m.items() if v is not None} for m in memories]
        emit_json([{**row, "content": redact(row["content"])} for row in rows])
        return
    for m in memories:
        score = f"  score={m['score']:.3f}" if m["score"] is not None else ""
        echo(f"{m['memory_id']}  {m['created_at'][:19]}Z{score}  {redact(m['content'])}")


def add(
    content: str = Argument(..., help="The memory's text."),
    user: str = _USER,
    session: str = Option(None, "--session", "-s", help="Session that produced it."),
    as_json: bool = _JSON,
) -> None:
    """Save a memory."""
    with open_graph() as graph:
        memory = graph.save_memory(user or graph.settings.user_id, content, session_id=session)
    if as_json:
        emit_json(memory.model_dump(exclude_none=True))
    else:
        echo(memory.memory_id)


def list_(
    user: str = _USER,
    session: str = Option(None, "--session", "-s", help="Only this session's memories."),
    limit: int = Option(100, "--limit", "-n", min=1, max=MAX_LIMIT),
    as_json: bool = _JSON,
) -> None:
    """A user's memories (or a session's), newest first."""
    with open_graph(read_only=True) as graph:
        if graph is None:
            if session:
                raise fail(f"session {session} not found")
            return say_nothing_stored(as_json, [])
        user = user or graph.settings.user_id
        if session:
            owned_session(graph, session, user)
            memories = graph.get_memories_for_session(session, limit=limit, plain=True)
        else:
            memories = graph.get_memories(user, limit=limit, plain=True)
    _show(memories, as_json)


def search(
    query: str = Argument(..., help='Tantivy syntax: words, "phrases", AND/OR/NOT, pre*.'),
    user: str = _USER,
    limit: int = Option(10, "--limit", "-n", min=1, max=MAX_LIMIT),
    as_json: bool = _JSON,
) -> None:
    """Full-text search of a user's memories, most relevant first."""
    from sessions_graph.query import parse

    parse(query)  # bad syntax is an error even where nothing is stored yet
    with open_graph(read_only=True) as graph:
        if graph is None:
            return say_nothing_stored(as_json, [])
        memories = graph.search_memories(
            user or graph.settings.user_id, query, limit=limit, plain=True
        )
    _show(memories, as_json)


def update(
    memory_id: str = Argument(...),
    content: str = Argument(..., help="The new text."),
    user: str = _USER,
    as_json: bool = _JSON,
) -> None:
    """Replace the text of one of the user's memories."""
    with open_graph() as graph:
        memory = graph.update_memory(memory_id, content, user_id=user or graph.settings.user_id)
    if memory is None:
        raise fail(f"memory {memory_id} not found")
    if as_json:
        emit_json(memory.model_dump(exclude_none=True))
    else:
        echo(f"updated {memory.memory_id}")


def delete(
    memory_id: str = Argument(...),
    user: str = _USER,
) -> None:
    """Delete one of the user's memories."""
    with open_graph() as graph:
        deleted = graph.delete_memory(memory_id, user_id=user or graph.settings.user_id)
    if not deleted:
        raise fail(f"memory {memory_id} not found")
    echo(f"deleted {memory_id}")
