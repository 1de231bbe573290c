"""The last hook event of each client, for ``status`` and the viewer.

Each hook process overwrites one small file per client in the state
directory (``hooks/last-<client>.json``: when, which event, what came of
it), so ``status`` can tell whether capture still works without reading the
log. Written with ``json`` and ``os`` only (the hook path imports nothing
heavier), atomically (a temporary file renamed over the old one), and never
raising: losing this note must not fail the hook.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

#: The clients a hook can come from, and ``unknown`` for a payload that was
#: refused before it could tell.
CLIENTS = ("claude-code", "codex", "unknown")


def client_of(payload: Any) -> str:
    """Which agent runtime sent ``payload``: Codex's notify, or a hook naming a
    Codex rollout file, is ``codex``; any other transcript, ``claude-code``."""
    if not isinstance(payload, dict):
        return "unknown"
    if payload.get("type") == "agent-turn-complete":
        return "codex"
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return "unknown"
    from sessions_graph.provenance import transcript_client

    return transcript_client(transcript)


def _file(state_dir: Path, client: str) -> Path:
    return state_dir / "hooks" / f"last-{client}.json"


def record(state_dir: Path, client: str, event: str, outcome: str) -> None:
    """Note this event as ``client``'s last one; never raises."""
    path = _file(state_dir, client)
    note = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "event": event,
        "outcome": outcome,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(note))
        os.replace(temporary, path)


def last_events(state_dir: Path) -> dict[str, dict[str, Any]]:
    """Each client's last hook event (``at``, ``event``, ``outcome``), for
    the clients that sent one."""
    found = {}
    for client in CLIENTS:
        with contextlib.suppress(OSError, ValueError):
            note = json.loads(_file(state_dir, client).read_text(encoding="utf-8"))
            if isinstance(note, dict):
                found[client] = {k: str(note.get(k, "")) for k in ("at", "event", "outcome")}
    return found
