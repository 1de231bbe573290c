"""History import: agent sessions recorded before the hooks were installed.

``sessions-graph import`` reads Claude Code transcripts
(``~/.claude/projects/**/*.jsonl``) and Codex rollouts
(``~/.codex/sessions/**/*.jsonl``) through the hook path's own code: the
session id is the one the runtime's hooks send, each transcript goes through
``handle.import_transcript`` (same parser, same action ids, same import
cursor). So importing twice, or importing what hooks already captured, stores
nothing twice, and a hook event that comes later continues at the cursor the
import left.

What a hook learns from its payload (session id, cwd) is read here from the
transcript's first entries, and the session is dated by its first timestamp
(``record_session_start(started_at=...)``).

Only the main conversation is imported, as hooks see it: Claude Code's
subagent transcripts (entries marked ``isSidechain``) are skipped. A session
the store already has for another user is never written; it is reported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.clock import parse_timestamp
from sessions_graph.errors import MemoryValidationError
from sessions_graph.hooks import codex
from sessions_graph.hooks.handle import Outcome, import_transcript
from sessions_graph.hooks.transcript import TranscriptError
from sessions_graph.project import project_key
from sessions_graph.validation import ID_PATTERN, check_id

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph

#: Lines read from the top of a transcript to find its session, start and cwd:
#: Claude Code may open with summaries and file snapshots before the first message.
HEAD_LINES = 2000
#: Longest line read whole while looking for the session: a longer one (a
#: huge tool result) is stepped over in pieces of this size, never held in
#: memory whole (the import itself reads it window by window later).
HEAD_LINE_BYTES = 8 * 1024 * 1024
#: A Codex rollout's file name ends with the session id (a UUID).
_ROLLOUT_ID = re.compile(
    r"rollout-.*?([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)


def default_sources() -> list[Path]:
    """Where Claude Code and Codex keep their history (their own overrides honoured)."""
    claude = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    codex_home = os.environ.get("CODEX_HOME") or "~/.codex"
    return [
        Path(claude).expanduser() / "projects",
        Path(codex_home).expanduser() / "sessions",
    ]


def find_transcripts(paths: Iterable[str | Path]) -> list[Path]:
    """The ``.jsonl`` files named or found (recursively) under ``paths``, in
    path order (Codex's dated directories: oldest first). A path that does not
    exist or is a file of another kind raises ``MemoryValidationError`` before
    anything is read."""
    found: list[Path] = []
    for given in paths:
        if not str(given).strip():  # Path("") is ".": the whole working directory
            raise MemoryValidationError("empty path: name a transcript file or directory")
        # Absolute but not resolved: the runtime names the transcript by the
        # same unresolved path, and the import cursor is keyed by it.
        path = Path(os.path.abspath(Path(given).expanduser()))
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.jsonl") if p.is_file()))
        elif path.is_file():
            if path.suffix != ".jsonl":
                raise MemoryValidationError(f"not a .jsonl transcript: {given}")
            found.append(path)
        elif os.path.lexists(path):  # a FIFO, a device, a socket, a broken link
            raise MemoryValidationError(f"not a regular file: {given}")
        else:
            raise MemoryValidationError(f"no such file or directory: {given}")
    return list(dict.fromkeys(found))


@dataclass
class Head:
    """What a transcript's first entries say about its session."""

    kind: str | None = None  # "claude" | "codex"; None: no conversation found
    session_id: str | None = None
    started_at: str | None = None
    cwd: str | None = None
    sidechain: bool = False


def read_head(path: Path) -> Head:
    """The session a transcript belongs to, its first timestamp and its cwd.

    Claude Code names the file after the session (``<session_id>.jsonl``, the
    id its hooks send); a Codex rollout opens with ``session_meta`` whose
    ``id`` its hooks send as ``session_id`` (older rollouts: a bare
    ``{"id", "timestamp"}`` line; else the UUID ending the file name).
    """
    head = Head()
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(_bounded_lines(fh)):
                if number >= HEAD_LINES or _complete(head):
                    break
                try:
                    entry: Any = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(entry, dict):
                    _read_entry(head, entry, number)
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from None
    if head.kind == "claude" and ID_PATTERN.fullmatch(path.stem):
        head.session_id = path.stem
    elif head.kind == "codex" and head.session_id is None:
        match = _ROLLOUT_ID.search(path.name)
        head.session_id = match.group(1) if match else None
    return head


def _bounded_lines(fh: Any) -> Iterable[bytes]:
    """The file's lines; one longer than ``HEAD_LINE_BYTES`` is yielded as
    ``b""`` (not JSON: skipped) after being read past in bounded pieces."""
    while raw := fh.readline(HEAD_LINE_BYTES):
        if len(raw) == HEAD_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := fh.readline(HEAD_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            raw = b""
        yield raw


def _complete(head: Head) -> bool:
    return (
        head.kind is not None
        and head.session_id is not None
        and head.started_at is not None
        and head.cwd is not None
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _time(value: Any) -> str | None:
    """An entry's timestamp in the one format, or None when it does not parse
    (or is out of range): the session is then dated by the next one that does."""
    return parse_timestamp(value[:64]) if isinstance(value, str) and value else None


def _read_entry(head: Head, entry: dict[str, Any], number: int) -> None:
    payload = entry.get("payload")
    if isinstance(payload, dict) or ("uuid" not in entry and entry.get("type") in codex.ITEM_TYPES):
        head.kind = head.kind or "codex"
        meta = payload if isinstance(payload, dict) else {}
        if entry.get("type") == "session_meta":
            head.session_id = head.session_id or _text(meta.get("id"))
            head.started_at = head.started_at or _time(meta.get("timestamp"))
        head.cwd = head.cwd or _text(meta.get("cwd"))
        head.started_at = head.started_at or _time(entry.get("timestamp"))
        return
    if number == 0 and "id" in entry and "uuid" not in entry and "type" not in entry:
        # A legacy rollout's opening line: {"id", "timestamp", "instructions"}.
        head.kind = "codex"
        head.session_id = _text(entry.get("id"))
        head.started_at = _time(entry.get("timestamp"))
        return
    if "sessionId" in entry or "uuid" in entry:
        # Claude Code: the session begins at its first dated entry (a queued
        # prompt comes before the prompt's own message), but only message
        # entries say the file holds a conversation.
        head.started_at = head.started_at or _time(entry.get("timestamp"))
        head.cwd = head.cwd or _text(entry.get("cwd"))
        head.session_id = head.session_id or _text(entry.get("sessionId"))
        if entry.get("type") in ("user", "assistant", "system") and isinstance(
            entry.get("uuid"), str
        ):
            head.kind = head.kind or "claude"
            head.sidechain = head.sidechain or entry.get("isSidechain") is True


@dataclass
class FileResult:
    """What importing one transcript did."""

    path: Path
    session_id: str | None = None
    added: int = 0
    foreign: int = 0  # actions another session recorded first (a resumed session)
    skipped: str | None = None  # why nothing was written
    error: str | None = None  # why the file could not be imported
    warnings: list[str] = field(default_factory=list)


@dataclass
class ImportSummary:
    """Totals of one import run."""

    files: int = 0
    sessions: int = 0
    added: int = 0
    skipped: int = 0
    other_user: int = 0
    failed: int = 0
    foreign: int = 0

    def add(self, result: FileResult) -> None:
        self.files += 1
        self.added += result.added
        self.foreign += result.foreign
        if result.error:
            self.failed += 1
        elif result.skipped:
            self.skipped += 1
            self.other_user += int(result.skipped == SKIP_OTHER_USER)
        else:
            self.sessions += 1

    def line(self) -> str:
        text = (
            f"imported {self.files} file{'s' * (self.files != 1)}: "
            f"{self.sessions} session{'s' * (self.sessions != 1)}, "
            f"{self.added:,} new action{'s' * (self.added != 1)}, {self.skipped} skipped"
        )
        if self.other_user:
            text += f" ({self.other_user} of another user)"
        if self.failed:
            text += f", {self.failed} failed"
        if self.foreign:
            text += f"; {self.foreign:,} actions were already another session's (resumed sessions)"
        return text

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


SKIP_OTHER_USER = "the session belongs to another user"


def import_file(graph: SessionsGraph, path: Path, user_id: str) -> FileResult:
    """Import one transcript for ``user_id``: the session (started at its first
    entry, with its cwd and project), then every action after the cursor."""
    result = FileResult(path)
    try:
        head = read_head(path)
    except TranscriptError as exc:
        result.error = str(exc)
        return result
    if head.kind is None:
        result.skipped = "no Claude Code or Codex conversation in it"
        return result
    if head.sidechain:
        result.skipped = "a subagent transcript (its parent session holds the conversation)"
        return result
    if head.session_id is None or not ID_PATTERN.fullmatch(head.session_id):
        result.skipped = "no valid session id"
        return result
    session_id = result.session_id = head.session_id
    owner = graph.session_owner(session_id)
    if owner is not None and owner != user_id:
        result.skipped = SKIP_OTHER_USER
        return result
    outcome = Outcome("import", session_id)
    source = str(path)
    try:
        graph.record_session_start(
            session_id,
            user_id=user_id,
            cwd=head.cwd,
            project_key=project_key(head.cwd),
            # None: the store dates the session (its first action's time, else now).
            started_at=head.started_at,
        )
        # One call reads at most one window of the file; go on until the cursor
        # stops moving (the end, or a last line still being written).
        while True:
            offset = graph.import_cursor(session_id, source)
            result.added += import_transcript(graph, session_id, user_id, source, outcome)
            if graph.import_cursor(session_id, source) == offset:
                break
    except MemoryValidationError as exc:
        # A file the store refuses (an invalid field): the other files go on.
        # (An action id recorded by another session is skipped, not refused.)
        result.error = str(exc)
    result.warnings = outcome.warnings
    result.foreign = outcome.foreign
    if result.added:
        graph.mark_pending(session_id)  # as a hook's turn end would
    return result


def import_history(
    graph: SessionsGraph,
    paths: Iterable[Path],
    user_id: str,
    on_file: Callable[[FileResult], None] | None = None,
) -> ImportSummary:
    """Import every transcript in ``paths`` for ``user_id``, oldest session
    first, reporting each file to ``on_file`` (progress, notes). A store fault
    stops the run (raised).

    The order is the one hooks would have seen: a resumed session's transcript
    repeats the entries of the session it resumes, and an action belongs to
    the session that recorded it first, so the older session must come first.
    """
    check_id(user_id, "user_id")
    summary = ImportSummary()
    for path in sorted(paths, key=_age):
        result = import_file(graph, path, user_id)
        summary.add(result)
        if on_file is not None:
            on_file(result)
    return summary


def _age(path: Path) -> tuple[str, float, str]:
    """Sort key: the session's start, then when the file was last written
    (a resumed copy starts with the same entries but is written later)."""
    try:
        start = read_head(path).started_at or "~"  # "~" sorts after any date
        modified = path.stat().st_mtime
    except (TranscriptError, OSError):
        start, modified = "~", 0.0  # reported when imported
    return start, modified, str(path)
