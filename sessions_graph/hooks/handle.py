"""What one hook payload does to the store.

Shared by the ``sessions-graph hook`` process and by spool replay, so that an
event replayed later has exactly the effect it would have had on time.

Which events do what (Claude Code names; Codex hooks use the same ones):

* every event with a ``transcript_path``: import the transcript from the
  session's cursor (the canonical record: entry uuids give stable action ids);
* ``SessionStart``: MERGE the user and session, with cwd and project key
  (``sessions_graph.project``), and move the project's sessions recorded
  under its old key to the new one (``adopt_legacy_project``);
* ``UserPromptSubmit`` without a transcript: record the prompt itself (see
  ``prompt_action``);
* ``Stop`` / ``SubagentStop`` / ``PreCompact``: mark the session pending;
  a ``Stop`` also answers the session's interactions with the turn's reply;
* ``SessionEnd``: end the session (pending), build its offline digest
  (``sessions_graph.digest``), and start a background reconcile if
  ``auto_reconcile`` is set;
* a Codex ``notify`` payload (``type: agent-turn-complete``): record the
  turn's messages and mark pending.

A session keeps the owner it was created with. The ``user_id`` passed in
(the hook's own setting, or on replay the one stored with the spooled payload,
so an event is never re-owned by whoever replays it) names the owner of a
session the store does not know yet. An event for a known session of another
user is refused (``MemoryValidationError``, worded "not found" as everywhere
else), with one exception that keeps a mid-session ``user_id`` change from
losing the rest of the session: an event naming the very transcript the
session has been imported from is that session's own runtime speaking, and is
recorded for the session's owner (reading the owner's transcript into the
owner's session gives nobody anyone else's text). The converse is refused
too: an event of a new or own session naming the transcript of another
user's session (the file is named after its session), whose lines not
captured yet would otherwise change owner.

Errors split in two: store faults (``is_store_fault``) may pass if retried
later, so the caller spools the payload; anything else (``PayloadError``,
``MemoryValidationError``, a bug of ours) would fail again, so the payload is
set aside in ``spool/rejected/`` instead of being retried forever.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.engines.base import not_found_for_user
from sessions_graph.errors import MemoryValidationError, SessionsGraphError, StoreError
from sessions_graph.hooks import codex
from sessions_graph.hooks.actions import Action, digest, make_action
from sessions_graph.hooks.transcript import TranscriptError, import_actions
from sessions_graph.project import project_of
from sessions_graph.validation import ID_PATTERN, check_id, without_surrogates

if TYPE_CHECKING:
    from sessions_graph.engines.base import ImportCursor
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Events after which the session waits for reconciliation.
TURN_END_EVENTS = frozenset({"Stop", "SubagentStop", "PreCompact"})
#: Longest cwd / path accepted from a payload (the store's limit for cwd).
MAX_PATH_CHARS = 4096
#: Most transcript bytes not imported yet that a hook imports itself. A
#: larger backlog (the first event of a long session recorded before the
#: hooks: 50 MB took 5-6 s and 141 MB of memory) is left to the background
#: replay, in order with the events after it (``runner``).
HOOK_IMPORT_BYTES = 2 * 1024 * 1024


class PayloadError(SessionsGraphError, ValueError):
    """The hook payload is malformed; retrying it can never succeed."""


def is_store_fault(exc: BaseException) -> bool:
    """Whether ``exc`` came from the store (down, locked, unwritable), so that
    the same payload may succeed later."""
    if isinstance(exc, (StoreError, OSError)):
        return True
    # Engines wrap their driver errors in StoreError; this catches any that slip through.
    return type(exc).__module__.split(".")[0] in ("sqlite3", "neo4j")


class Outcome:
    """What handling one payload did, for the log. (A plain class: the
    ``dataclasses`` module costs a hook several milliseconds of imports.)"""

    __slots__ = ("added", "event", "foreign", "reread", "session_id", "user_id", "warnings")

    def __init__(self, event: str, session_id: str) -> None:
        self.event = event
        self.session_id = session_id
        self.added = 0
        self.foreign = 0  # skipped: recorded by another session first (a resumed session)
        self.reread = False  # the transcript no longer matched its cursor: read again
        # Whom context is for: the hook's own user, or None (see handle_payload).
        self.user_id: str | None = None
        self.warnings: list[str] = []

    def summary(self) -> str:
        text = f"{self.event} session={self.session_id} new_actions={self.added}"
        if self.foreign:
            text += f"; skipped {self.foreign} actions recorded by another session"
        if self.reread:
            text += "; transcript rewritten since the last import, read again from its start"
        return text


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
    check_id(user_id, "user_id")
    outcome = Outcome(event, session_id)
    # A lone surrogate (valid JSON, not a path the OS can take) must not fail
    # the event: it becomes U+FFFD, and such a transcript is simply not found.
    cwd = without_surrogates(payload["cwd"]) if payload.get("cwd") else None
    transcript = payload.get("transcript_path")
    source = _source(transcript) if transcript else None
    cursor = graph.import_cursor_state(session_id)
    acting = _acting_user(graph, session_id, user_id, source, cursor)
    # Context goes only to the hook's own user: an event recorded for the
    # session's owner (naming the owner's transcript, see above) gets none,
    # so that no hook can read another user's context by naming their file.
    outcome.user_id = acting if acting == user_id else None
    user_id = acting
    if event in ("SessionStart", "agent-turn-complete"):
        project = project_of(cwd)
        graph.record_session_start(
            session_id, user_id=user_id, cwd=cwd, project_key=project.key if project else None
        )
        if event == "SessionStart" and project and project.legacy != project.key:
            # Sessions this project's cwd recorded under its old key (the base
            # name) are this project's: moved once, found from now on.
            graph.adopt_legacy_project(user_id, project.legacy, project.root, project.key)
    if event == "agent-turn-complete":
        actions = codex.notify_actions(payload)
        _record(graph, session_id, actions, user_id, outcome)
        graph.mark_pending(session_id)
        return outcome
    if source:
        _import_transcript(graph, session_id, user_id, source, cursor, outcome)
    elif transcript:
        outcome.warnings.append(f"transcript_path is not a .jsonl file: {transcript[:200]}")
    elif event == "UserPromptSubmit":
        action = prompt_action(session_id, payload)
        if action is not None:
            _record(graph, session_id, [action], user_id, outcome)
    if event in TURN_END_EVENTS:
        graph.mark_pending(session_id)
        if event == "Stop":
            from sessions_graph.hooks.interactions import record_turn_answer

            record_turn_answer(graph, session_id, user_id)  # the turn's reply answers its prompt
    elif event == "SessionEnd":
        graph.record_session_end(session_id)
        # The offline digest, so that "where you left off" has it next time;
        # reconciliation may write a better one with an LLM.
        graph.build_digest(session_id)
        if settings.auto_reconcile:
            from sessions_graph.hooks.spawn import spawn_reconcile

            # For the session's owner: the reconcile run acts for one user.
            spawn_reconcile(settings, session_id, user_id=user_id)
    return outcome


def transcript_backlog(graph: SessionsGraph, payload: dict[str, Any]) -> int:
    """How many bytes of the payload's transcript lie past the session's
    import cursor (0 without a transcript, or one that cannot be read: the
    import reports that). A transcript the cursor does not name is read from
    its start."""
    transcript = payload.get("transcript_path")
    source = _source(transcript) if isinstance(transcript, str) else None
    session_id = payload.get("session_id")
    if source is None or not isinstance(session_id, str):
        return 0
    try:
        size = Path(source).stat().st_size
    except (OSError, ValueError):
        return 0
    cursor = graph.import_cursor_state(session_id)
    offset = cursor.offset if cursor is not None and cursor.source == source else 0
    return max(0, size - offset)


def _source(transcript: str) -> str | None:
    """The transcript path as stored with the cursor; None if it is not a
    ``.jsonl`` file (only those are read, so a payload cannot make us read any
    file)."""
    path = Path(without_surrogates(transcript)).expanduser()
    return str(path) if path.suffix == ".jsonl" else None


def _acting_user(
    graph: SessionsGraph,
    session_id: str,
    user_id: str,
    source: str | None,
    cursor: ImportCursor | None,
) -> str:
    """Whose event this is: ``user_id`` for a new session or one of its own;
    the owner for an event naming the transcript the session is imported from
    (see the module docstring); refused for anyone else's session."""
    if source is not None:
        for named in _transcript_sessions(source):
            if named == session_id:
                continue
            # Another session's own transcript (runtimes name the file after
            # its session): its lines not captured yet would become this
            # user's, and the owner's next event would skip them as foreign.
            other = graph.session_owner(named)
            if other is not None and other != user_id:
                raise MemoryValidationError(not_found_for_user(named, user_id))
    owner = graph.session_owner(session_id)
    if owner is None or owner == user_id:
        return user_id
    if source is not None and cursor is not None and cursor.source == source:
        return owner
    raise MemoryValidationError(not_found_for_user(session_id, user_id))


def _transcript_sessions(source: str) -> list[str]:
    """The sessions a transcript file may be named after: Claude Code's
    ``<session_id>.jsonl``, and the UUID ending a Codex rollout's name."""
    stem = Path(source).stem
    names = [stem] if ID_PATTERN.fullmatch(stem) else []
    if stem.startswith("rollout-") and len(stem) > 45 and stem[-37] == "-":
        names.append(stem[-36:])
    return names


def _record(
    graph: SessionsGraph, session_id: str, actions: list[Action], user_id: str, outcome: Outcome
) -> None:
    report = graph.record_actions_report(session_id, actions, user_id=user_id)
    outcome.added += report.added
    outcome.foreign += report.foreign


def import_transcript(
    graph: SessionsGraph, session_id: str, user_id: str, transcript: str, outcome: Outcome
) -> int:
    """Import ``transcript`` after the session's cursor; return how many actions
    were new. History import (``hooks.history``) calls it too, so both paths
    store the same actions and leave the same cursor."""
    source = _source(transcript)
    if source is None:
        outcome.warnings.append(f"transcript_path is not a .jsonl file: {transcript[:200]}")
        return 0
    before = outcome.added
    _import_transcript(
        graph, session_id, user_id, source, graph.import_cursor_state(session_id), outcome
    )
    return outcome.added - before


def _import_transcript(
    graph: SessionsGraph,
    session_id: str,
    user_id: str,
    source: str,
    cursor: ImportCursor | None,
    outcome: Outcome,
) -> None:
    """Import the transcript after the cursor; a transcript we cannot read is a
    warning, not a failure: the rest of the event (pending, end) still applies."""
    same = cursor is not None and cursor.source == source
    offset, known = (cursor.offset, cursor.fingerprint) if same and cursor else (0, None)
    try:
        imported = import_actions(Path(source), offset, session_id, known)
    except TranscriptError as exc:
        outcome.warnings.append(str(exc))
        return
    if imported.skipped:
        # Without the skip the cursor could never pass this line (see transcript.py).
        outcome.warnings.append(
            f"skipped a transcript line of {imported.skipped} bytes, longer than one read,"
            f" in {source}"
        )
    outcome.reread = imported.reread
    if imported.actions:
        _record(graph, session_id, imported.actions, user_id, outcome)
    if not same or (imported.offset, imported.fingerprint) != (offset, known):
        # After the actions: a crash in between re-reads lines, it never skips
        # them. Stored even at offset 0, so the session knows its transcript.
        graph.set_import_cursor(session_id, source, imported.offset, imported.fingerprint)


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
