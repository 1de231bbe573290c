"""Incremental transcript import: the bytes after the cursor, whole lines only.

The runtime appends to the transcript while hooks run, so the last line may
be half written: only bytes up to the last newline are consumed, and the
cursor is moved to just after it. The rest is read by the next call.

Each line is routed by its shape, so one reader serves Claude Code
transcripts and Codex rollouts (and a file mixing both would still work).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sessions_graph.hooks import claude, codex
from sessions_graph.hooks.actions import Action

#: Largest slice read in one call; a longer backlog is imported over several calls.
MAX_READ_BYTES = 32 * 1024 * 1024


class TranscriptError(Exception):
    """The transcript exists but cannot be read (permissions, not a file)."""


def read_complete_lines(path: Path, offset: int) -> tuple[list[tuple[int, bytes]], int]:
    """Whole lines after ``offset`` as (line offset, bytes), and the new cursor.

    A missing file is an empty transcript (runtimes create it lazily). A file
    shorter than the cursor was replaced, so it is read again from the start:
    ids are stable, so re-reading stores nothing twice.
    """
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            if size < offset:
                offset = 0
            fh.seek(offset)
            data = fh.read(MAX_READ_BYTES)
    except FileNotFoundError:
        return [], offset
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    end = data.rfind(b"\n") + 1
    lines: list[tuple[int, bytes]] = []
    start = 0
    while start < end:
        stop = data.index(b"\n", start) + 1
        lines.append((offset + start, data[start:stop]))
        start = stop
    return lines, offset + end


def line_actions(line: bytes, offset: int, session_id: str) -> list[Action]:
    """The actions of one JSONL line; [] for blank, malformed or non-message lines."""
    try:
        entry: Any = json.loads(line)
    except (ValueError, RecursionError):
        return []
    if not isinstance(entry, dict):
        return []
    if "payload" in entry or ("uuid" not in entry and entry.get("type") in codex.ITEM_TYPES):
        return codex.entry_actions(entry, session_id, offset)
    return claude.entry_actions(entry)


def import_actions(path: Path, offset: int, session_id: str) -> tuple[list[Action], int]:
    """All actions after ``offset`` in file order, and the cursor to store afterwards."""
    lines, new_offset = read_complete_lines(path, offset)
    actions: list[Action] = []
    for line_offset, line in lines:
        actions.extend(line_actions(line, line_offset, session_id))
    return actions, new_offset
