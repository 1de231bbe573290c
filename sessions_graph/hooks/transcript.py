"""Incremental transcript import: the bytes after the cursor, whole lines only.

The runtime appends to the transcript while hooks run, so the last line may
be half written: only whole lines are consumed (up to the last newline, and
a last line without one if it parses as JSON), and the cursor is moved to
just after them. The rest is read by the next call.

The cursor carries a fingerprint of the prefix it stands after (see
``fingerprint``). A file shorter than the cursor, or whose prefix no longer
matches it, was replaced or rewritten: it is read again from the start, and
the stable action ids keep that from storing anything twice. Without the
check, a file rewritten longer than the cursor would be read from the middle
of a line, and every line before the cursor would be lost without a word.

Only regular files are read (a FIFO would block the open for ever, a device
such as ``/dev/zero`` never ends), and one call reads at most
``MAX_READ_BYTES``. A line longer than that (no newline in a full window)
could never be consumed whole, and would hold the cursor in place forever:
it is skipped instead, by scanning forward in ``SKIP_STEP_BYTES`` steps to its
newline (never past the size the file had when opened), and reported once.

Each line is routed by its shape, so one reader serves Claude Code
transcripts and Codex rollouts (and a file mixing both would still work).
"""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from sessions_graph.hooks import claude, codex
from sessions_graph.hooks.actions import Action

#: Largest slice read in one call; a longer backlog is imported over several calls.
MAX_READ_BYTES = 32 * 1024 * 1024
#: Step of the forward scan past an over-long line (memory stays bounded).
SKIP_STEP_BYTES = 1024 * 1024
#: Bytes of the imported prefix, at its start and at its end, that its
#: fingerprint covers: what a rewrite changes, read in two small reads.
FINGERPRINT_WINDOW = 4096


class TranscriptError(Exception):
    """The transcript exists but cannot be read (permissions, not a regular file)."""


class Lines(NamedTuple):
    """Whole lines read after a cursor."""

    lines: list[tuple[int, bytes]]  # (line offset, bytes with the newline)
    offset: int  # the cursor to store afterwards
    skipped: int  # bytes of an over-long line stepped over (0: none)
    fingerprint: str | None = None  # of the prefix before ``offset`` (None: empty)
    reread: bool = False  # the file no longer matched the cursor: read from the start


class Imported(NamedTuple):
    """What one import call found."""

    actions: list[Action]
    offset: int
    skipped: int
    fingerprint: str | None
    reread: bool


def fingerprint(fh: BinaryIO, offset: int) -> str | None:
    """A fingerprint of the file's first ``offset`` bytes: its first and last
    ``FINGERPRINT_WINDOW`` bytes and its length (None for an empty prefix).

    Not a hash of the whole prefix, which would cost a read of the whole file
    on every hook call: a rewrite that matters changes the bytes just before
    the cursor (or leaves it inside a line), or the head, where the first
    entry's ids and time stand. CRC-32 (zlib, cheap to import) is enough to
    notice an accident; it is no defence against a crafted file, and needs
    none: a matching rewrite only means its earlier lines are not re-read.
    """
    if offset <= 0:
        return None
    fh.seek(0)
    head = fh.read(min(offset, FINGERPRINT_WINDOW))
    fh.seek(max(0, offset - FINGERPRINT_WINDOW))
    tail = fh.read(min(offset, FINGERPRINT_WINDOW))
    return f"{offset:x}-{zlib.crc32(tail, zlib.crc32(head)):08x}"


def _still_matches(fh: BinaryIO, size: int, offset: int, known: str | None) -> bool:
    """Whether the file still holds the prefix the cursor stands after. A
    cursor stored without a fingerprint (by an older version) is checked the
    one way left: it must stand just after a newline."""
    if size < offset:
        return False
    if known is not None:
        return fingerprint(fh, offset) == known
    fh.seek(offset - 1)
    return fh.read(1) == b"\n"


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (after symlinks).

    Opened non-blocking, so that a FIFO with no writer cannot block the open;
    the type is then checked on the open descriptor itself, so that the file
    cannot be swapped for something else between a check and the open.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TranscriptError(f"cannot read transcript {path}: not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_complete_lines(path: Path, offset: int, known: str | None = None) -> Lines:
    """Whole lines after ``offset`` and the new cursor (the last line of the
    file counts as whole without its newline when it parses as JSON).

    ``known`` is the fingerprint stored with ``offset``; when the file no
    longer matches it (or is shorter than ``offset``), it is read from the
    start. A missing file is an empty transcript (runtimes create it lazily).
    """
    window = MAX_READ_BYTES
    skipped = 0
    reread = False
    try:
        with _open_regular(path) as fh:
            size = fh.seek(0, 2)
            if offset and not _still_matches(fh, size, offset, known):
                offset, reread = 0, True
            fh.seek(offset)
            data = fh.read(window)
            if len(data) == window and b"\n" not in data:
                end = _next_line_start(fh, size)
                if end is None:  # its end is not written yet: wait for it
                    return Lines([], offset, 0, fingerprint(fh, offset), reread)
                skipped, offset = end - offset, end
                fh.seek(offset)
                data = fh.read(window)
            end = data.rfind(b"\n") + 1
            if offset + len(data) == size and _is_complete(data[end:]):
                end = len(data)  # a whole last line that just has no newline
            new_fingerprint = fingerprint(fh, offset + end)
    except FileNotFoundError:
        return Lines([], offset, 0, known)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    lines: list[tuple[int, bytes]] = []
    start = 0
    while start < end:
        stop = data.find(b"\n", start, end) + 1 or end
        lines.append((offset + start, data[start:stop]))
        start = stop
    return Lines(lines, offset + end, skipped, new_fingerprint, reread)


def _is_complete(tail: bytes) -> bool:
    """Whether the bytes after the file's last newline are a whole entry: they
    parse as JSON. An entry is a JSON object, and no proper prefix of one
    parses, so a line still being written never passes for whole; a file
    whose last line was saved without a newline (an editor, a copy) loses
    nothing."""
    if not tail.strip():
        return False
    try:
        json.loads(tail)
    except (ValueError, RecursionError):
        return False
    return True


def _next_line_start(fh: BinaryIO, size: int) -> int | None:
    """The offset just after the next newline from ``fh``'s position, or None
    at ``size`` (the file's size when opened: a growing file cannot keep the
    scan going)."""
    while fh.tell() < size and (chunk := fh.read(min(SKIP_STEP_BYTES, size - fh.tell()))):
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


def import_actions(path: Path, offset: int, session_id: str, known: str | None = None) -> Imported:
    """All actions after ``offset`` in file order, the cursor and fingerprint
    to store afterwards, how many bytes of an over-long line were skipped, and
    whether the file had to be read again from the start (``known``: the
    fingerprint stored with ``offset``)."""
    lines, new_offset, skipped, new_fingerprint, reread = read_complete_lines(path, offset, known)
    actions: list[Action] = []
    for line_offset, line in lines:
        actions.extend(line_actions(line, line_offset, session_id))
    return Imported(actions, new_offset, skipped, new_fingerprint, reread)
