"""What one hook payload does to the store.

Shared by the ``sessions-graph hook`` process and by spool replay, so that an
event replayed later has exactly the effect it would have had on time.

Which events do what (Claude Code names; Codex hooks use the same ones):

* every event with a ``transcript_path``: import the transcript from the
  session's cursor (the canonical record: entry uuids give stable action ids);
* ``SessionStart``: MERGE the user and session, with cwd and project key;
* ``UserPromptSubmit`` without a transcript: record the prompt itself (see
  ``prompt_action``);
* ``Stop`` / ``SubagentStop`` / ``PreCompact``: mark the session pending;
* ``SessionEnd``: end the session (pending), and start a background
  reconcile if ``auto_reconcile`` is set;
* a Codex ``notify`` payload (``type: agent-turn-complete``): record the
  turn's messages and mark pending.

A session keeps the owner it was created with. The ``user_id`` passed in
(the hook's own setting, or on replay the one stored with the spooled payload,
so an event is never re-owned by whoever replays it) names the owner of a
session the store does not know yet; changing ``user_id`` in the middle of a
session therefore loses none of its events.

Errors split in two: store faults (``is_store_fault``) may pass if retried
later, so the caller spools the payload; anything else (``PayloadError``,
``MemoryValidationError``, a bug of ours) would fail again, so the payload is
set aside in ``spool/rejected/`` instead of being retried forever.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.errors import SessionsGraphError, StoreError
from sessions_graph.hooks import codex
from sessions_graph.hooks.actions import Action, digest, make_action
from sessions_graph.hooks.transcript import TranscriptError, import_actions
from sessions_graph.validation import check_id, without_surrogates

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Events after which the session waits for reconciliation.
TURN_END_EVENTS = frozenset({"Stop", "SubagentStop", "PreCompact"})
#: Longest cwd / path accepted from a payload (the store's limit for cwd).
MAX_PATH_CHARS = 4096


class PayloadError(SessionsGraphError, ValueError):
    """The hook payload is malformed; retrying it can never succeed."""


def is_store_fault(exc: BaseException) -> bool:
    """Whether ``exc`` came from the store (down, locked, unwritable), so that
    the same payload may succeed later."""
    if isinstance(exc, (StoreError, OSError)):
        return True
    # Engines wrap their driver errors in StoreError; this catches any that slip through.
    return type(exc).__module__.split(".")[0] in ("sqlite3", "neo4j")


@dataclass
class Outcome:
    """What handling one payload did, for the log."""

    event: str
    session_id: str
    added: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.event} session={self.session_id} new_actions={self.added}"


def validate(payload: Any) -> tuple[str, str]:
    """(event, session_id) of a usable payload; raises before anything is written."""
    if not isinstance(payload, dict):
        raise PayloadError("payload is not a JSON object")
    if payload.get("type") == "agent-turn-complete":  # Codex notify
        return "agent-turn-complete", check_id(payload.get("thread-id"), "thread-id")
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or not event.isidentifier() or len(event) > 64:
        raise PayloadError(f"missing or invalid hook_event_name {str(event)[:40]!r}")
    session_id = check_id(payload.get("session_id"), "session_id")
    for key in ("cwd", "transcript_path"):
        value = payload.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_PATH_CHARS):
            raise PayloadError(f"{key} must be a string of at most {MAX_PATH_CHARS} characters")
    return event, session_id


def handle_payload(graph: SessionsGraph, settings: Settings, payload: Any, user_id: str) -> Outcome:
    """Apply one payload to the store for ``user_id`` (idempotent: replaying
    it changes nothing)."""
    event, session_id = validate(payload)
    user_id = graph.session_owner(session_id) or check_id(user_id, "user_id")
    outcome = Outcome(event, session_id)
    # A lone surrogate (valid JSON, not a path the OS can take) must not fail
    # the event: it becomes U+FFFD, and such a transcript is simply not found.
    cwd = without_surrogates(payload["cwd"]) if payload.get("cwd") else None
    if event in ("SessionStart", "agent-turn-complete"):
        graph.record_session_start(
            session_id, user_id=user_id, cwd=cwd, project_key=project_key(cwd)
        )
    if event == "agent-turn-complete":
        actions = codex.notify_actions(payload)
        outcome.added = graph.record_actions(session_id, actions, user_id=user_id)
        graph.mark_pending(session_id)
        return outcome
    transcript = payload.get("transcript_path")
    if transcript:
        transcript = without_surrogates(transcript)
        outcome.added += import_transcript(graph, session_id, user_id, transcript, outcome)
    elif event == "UserPromptSubmit":
        action = prompt_action(session_id, payload)
        if action is not None:
            outcome.added += graph.record_actions(session_id, [action], user_id=user_id)
    if event in TURN_END_EVENTS:
        graph.mark_pending(session_id)
    elif event == "SessionEnd":
        graph.record_session_end(session_id)
        if settings.auto_reconcile:
            from sessions_graph.hooks.spawn import spawn_reconcile

            spawn_reconcile(settings, session_id)
    return outcome


def import_transcript(
    graph: SessionsGraph, session_id: str, user_id: str, transcript: str, outcome: Outcome
) -> int:
    """Import the transcript after the cursor; a transcript we cannot read is a
    warning, not a failure: the rest of the event (pending, end) still applies.
    History import (``hooks.history``) calls it too, so both paths store the
    same actions and leave the same cursor."""
    path = Path(transcript).expanduser()
    if path.suffix != ".jsonl":
        # Only JSONL transcripts are read, so a payload cannot make us read any file.
        outcome.warnings.append(f"transcript_path is not a .jsonl file: {transcript[:200]}")
        return 0
    source = str(path)
    offset = graph.import_cursor(session_id, source)
    try:
        actions, new_offset, skipped = import_actions(path, offset, session_id)
    except TranscriptError as exc:
        outcome.warnings.append(str(exc))
        return 0
    if skipped:
        # Without the skip the cursor could never pass this line (see transcript.py).
        outcome.warnings.append(
            f"skipped a transcript line of {skipped} bytes, longer than one read, in {source}"
        )
    added = graph.record_actions(session_id, actions, user_id=user_id) if actions else 0
    if new_offset != offset:
        # After the actions: a crash in between re-reads lines, it never skips them.
        graph.set_import_cursor(session_id, source, new_offset)
    return added


def prompt_action(session_id: str, payload: dict[str, Any]) -> Action | None:
    """The prompt of a ``UserPromptSubmit`` that came without a transcript.

    With a transcript the prompt is taken from it instead (its entry uuid is
    the id), so it is never stored twice. Here the id hashes the session, the
    event, the turn id when the runtime sends one (Codex does), and the
    prompt: a retried delivery is idempotent; the same prompt sent twice in
    one session without a turn id is kept once.
    """
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    turn = payload.get("turn_id") if isinstance(payload.get("turn_id"), str) else ""
    key = f"{session_id}\0UserPromptSubmit\0{turn}\0{prompt}"
    action_id = "up-" + digest(key)
    return make_action(action_id, "user_message", prompt, None)


def project_key(cwd: str | None) -> str | None:
    """The project a directory belongs to: its git root's name, else its own name."""
    if not cwd:
        return None
    path = Path(cwd)
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate.name or None
    return path.name or None
