"""Incremental transcript import: the bytes after the cursor, whole lines only.

The runtime appends to the transcript while hooks run, so the last line may
be half written: only bytes up to the last newline are consumed, and the
cursor is moved to just after it. The rest is read by the next call.

One call reads at most ``MAX_READ_BYTES``. A line longer than that (no
newline in a full window) could never be consumed whole, and would hold the
cursor in place forever: it is skipped instead, by scanning forward in
``SKIP_STEP_BYTES`` steps to its newline, and reported once.

Each line is routed by its shape, so one reader serves Claude Code
transcripts and Codex rollouts (and a file mixing both would still work).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from sessions_graph.hooks import claude, codex
from sessions_graph.hooks.actions import Action

#: Largest slice read in one call; a longer backlog is imported over several calls.
MAX_READ_BYTES = 32 * 1024 * 1024
#: Step of the forward scan past an over-long line (memory stays bounded).
SKIP_STEP_BYTES = 1024 * 1024


class TranscriptError(Exception):
    """The transcript exists but cannot be read (permissions, not a file)."""


class Lines(NamedTuple):
    """Whole lines read after a cursor."""

    lines: list[tuple[int, bytes]]  # (line offset, bytes with the newline)
    offset: int  # the cursor to store afterwards
    skipped: int  # bytes of an over-long line stepped over (0: none)


class Imported(NamedTuple):
    """What one import call found."""

    actions: list[Action]
    offset: int
    skipped: int


def read_complete_lines(path: Path, offset: int) -> Lines:
    """Whole lines after ``offset`` and the new cursor.

    A missing file is an empty transcript (runtimes create it lazily). A file
    shorter than the cursor was replaced, so it is read again from the start:
    ids are stable, so re-reading stores nothing twice.
    """
    window = MAX_READ_BYTES
    skipped = 0
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            if size < offset:
                offset = 0
            fh.seek(offset)
            data = fh.read(window)
            if len(data) == window and b"\n" not in data:
                end = _next_line_start(fh)
                if end is None:  # its end is not written yet: wait for it
                    return Lines([], offset, 0)
                skipped, offset = end - offset, end
                fh.seek(offset)
                data = fh.read(window)
    except FileNotFoundError:
        return Lines([], offset, 0)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    end = data.rfind(b"\n") + 1
    lines: list[tuple[int, bytes]] = []
    start = 0
    while start < end:
        stop = data.index(b"\n", start) + 1
        lines.append((offset + start, data[start:stop]))
        start = stop
    return Lines(lines, offset + end, skipped)


def _next_line_start(fh: BinaryIO) -> int | None:
    """The offset just after the next newline from ``fh``'s position, or None at EOF."""
    while chunk := fh.read(SKIP_STEP_BYTES):
        newline = chunk.find(b"\n")
        if newline >= 0:
            return fh.tell() - len(chunk) + newline + 1
    return None


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


def import_actions(path: Path, offset: int, session_id: str) -> Imported:
    """All actions after ``offset`` in file order, the cursor to store
    afterwards, and how many bytes of an over-long line were skipped."""
    lines, new_offset, skipped = read_complete_lines(path, offset)
    actions: list[Action] = []
    for line_offset, line in lines:
        actions.extend(line_actions(line, line_offset, session_id))
    return Imported(actions, new_offset, skipped)
