"""``sessions-graph hook``: the process agent runtimes start on every event.

Contract with the agent: exit 0, at most one line on stderr, always fast.
Stdout carries nothing but, for ``SessionStart`` and ``UserPromptSubmit``,
the one JSON object of context for the model (``hooks/inject.py``): the
runtime adds whatever a hook prints there to the conversation, so stdout is
swapped for a sink while the hook works, and only that object is written to
the real one. Every problem is logged to ``settings.log_path`` instead of
raised.

Order of work: load the settings, parse and validate the payload (a bad one
is logged and dropped: retrying cannot fix it), open the store, replay
anything spooled earlier (so events land in arrival order), then handle this
event. If the store cannot be opened or written, the payload is spooled for
the next call. Waiting for a locked store and replaying the spool share one
budget (``HOOK_BUDGET_SECONDS``): a spool longer than it can replay is left
to a background replay, with this event queued behind it; so is an event
whose transcript has more not imported than a hook imports
(``handle.HOOK_IMPORT_BYTES``). Context is looked
up only after the event is stored (capture first): a store that is down,
busy, or so slow that the capture alone took ``INJECT_WITHIN_SECONDS``,
injects nothing; a look-up is given up after ``INJECT_LOOKUP_SECONDS``; a
failed one is logged, never spooled. If the settings
themselves do not load (a bad value in the config file or the environment),
the event cannot be applied now but is not lost either: it is spooled, and
the first hook call or reconcile run with valid settings replays it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.errors import MemoryValidationError, StoreBusyError
from sessions_graph.hooks.handle import (
    HOOK_IMPORT_BYTES,
    Outcome,
    PayloadError,
    handle_payload,
    is_store_fault,
    transcript_backlog,
    validate,
)
from sessions_graph.hooks.log import log_line, to_stderr

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Events whose output may carry context (``hooks/inject.py``, loaded only for them).
INJECTING_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})

#: Most of its time a hook spends waiting for a locked store and replaying
#: the spool; what is left of the spool is replayed in the background.
HOOK_BUDGET_SECONDS = 1.0
#: A capture slower than this (seconds since the hook started) means the
#: store is struggling: the agent is kept waiting no longer, nothing is injected.
INJECT_WITHIN_SECONDS = 2.0
#: The longest the context look-up may take; past it the hook answers with
#: nothing rather than keep the agent waiting.
INJECT_LOOKUP_SECONDS = 1.0
#: Largest payload read from stdin; a bigger one is rejected, not buffered.
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024

USAGE = """\
usage: sessions-graph hook [PAYLOAD_JSON]

Record one agent hook event. The event's JSON is read from stdin (Claude Code
and Codex hooks) or taken from the last argument (Codex `notify`). Always
exits 0; problems are logged to the sessions-graph log file.
"""


#: Optional modules the Bolt driver imports when installed (for DataFrame
#: export): about 300 ms that a hook never uses. Hidden in this short-lived
#: process only, so a Memgraph-backed hook pays for the driver alone.
UNUSED_BY_HOOKS = ("numpy", "pandas", "pyarrow")


def main(argv: list[str]) -> int:
    """Run one hook event; the return value is always 0."""
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    _hold_closed_standard_descriptors()
    started = time.monotonic()
    stdout, sys.stdout = sys.stdout, io.StringIO()  # what anything else prints is dropped
    try:
        context = _main(argv, started)
    finally:
        sys.stdout = stdout
    if context is not None and stdout is not None:
        with contextlib.suppress(OSError, ValueError):  # stdout closed by the runtime
            stdout.write(context)
            stdout.flush()
    return 0


def _main(argv: list[str], started: float) -> str | None:
    """Run the event; the hook output to print, if any."""
    # Our one line is all the agent may see on stderr: no library's warnings
    # (the Bolt driver's preview and deprecation warnings, among others).
    warnings.simplefilter("ignore")
    for name in UNUSED_BY_HOOKS:
        sys.modules.setdefault(name, None)  # type: ignore[assignment]
    try:
        settings, problem = _settings()
    except Exception as exc:  # not even the state directory: nowhere to keep the event
        to_stderr(f"sessions-graph: hook skipped: {' '.join(str(exc).split())}")
        return None
    try:
        return run(argv, settings, problem, started=started)
    except Exception as exc:  # last line of defence: never a traceback
        log_line(
            settings.log_path, "ERROR", f"hook failed: {type(exc).__name__}: {exc}", stderr=True
        )
    return None


def _hold_closed_standard_descriptors() -> None:
    """Put /dev/null on each of fd 0, 1, 2 the runtime left closed. Otherwise
    the next file opened (the database, the log) takes that number, and
    anything written to "stderr" at the C level would land in it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            # os.open takes the lowest free number: this one.
            os.open(os.devnull, os.O_RDWR)


def _settings() -> tuple[Settings, Exception | None]:
    """The settings, or, when they do not load, defaults that still locate the
    state directory (so the event can be kept) and the reason."""
    from sessions_graph.settings import Settings, load_settings, state_dir_despite_errors

    try:
        return load_settings(), None
    except Exception as exc:  # a bad setting must break neither the agent nor the event
        return Settings(state_dir=str(state_dir_despite_errors())), exc


def run(
    argv: list[str],
    settings: Settings,
    settings_problem: Exception | None = None,
    *,
    started: float | None = None,
) -> str | None:
    """Record one event; return the hook output to print (context), if any."""
    from sessions_graph.hooks import health

    payload: Any = None
    try:
        payload = _read_payload(argv)
        event, session_id = validate(payload)
    except (PayloadError, MemoryValidationError) as exc:
        log_line(settings.log_path, "ERROR", f"hook payload rejected: {exc}", stderr=True)
        event = payload.get("hook_event_name") if isinstance(payload, dict) else None
        note = health.client_of(payload), str(event or "?"), "rejected (bad payload)"
        health.record(Path(settings.state_dir), *note)
        return None
    from sessions_graph.hooks.spool import spool_payload

    def noted(outcome: str) -> None:
        health.record(Path(settings.state_dir), health.client_of(payload), event, outcome)

    if settings_problem is not None:
        # No user_id is recorded: the corrected settings decide whose it is.
        kept = spool_payload(settings, payload, user_id=None)
        message = (
            f"{event} session={session_id}: not recorded, settings unusable; spooled as"
            f" {kept.name}, applied by the next hook call or reconcile run once the settings"
            f" are fixed (the config file, `sessions-graph config path`, or the environment):"
            f" {settings_problem}"
        )
        log_line(settings.log_path, "ERROR", message, stderr=True)
        noted("spooled (settings unusable)")
        return None
    try:
        context, outcome = _store(
            payload, settings, time.monotonic() if started is None else started
        )
        noted(outcome)
        return context
    except StoreBusyError as exc:
        # Locked past the budget by other writers: not an outage. The event
        # waits its turn in the spool and a background replay, which may wait
        # as long as a batch job can, applies it; the agent is not told.
        _queue_behind(payload, settings, f"store busy ({exc})")
        noted("spooled (store busy)")
    except Exception as exc:
        fault = is_store_fault(exc)
        # A store fault may pass: spool for replay. Anything else would fail
        # again: keep the payload aside for a human, never retry it.
        reason = f"{type(exc).__name__}: {exc}"
        kept = spool_payload(
            settings, payload, user_id=settings.user_id, rejected=not fault, reason=reason
        )
        what = "store unavailable" if fault else "rejected"
        where = f"spooled as {kept.name}" if fault else f"kept as rejected/{kept.name}"
        message = f"{event} session={session_id}: {what} ({reason}); {where}"
        log_line(settings.log_path, "WARN" if fault else "ERROR", message, stderr=True)
        noted("spooled (store unavailable)" if fault else "rejected (kept aside)")
    return None


def _store(payload: dict[str, Any], settings: Settings, started: float) -> tuple[str | None, str]:
    """Record the event; (the hook output to print, if any; what came of it,
    for ``hooks.health``)."""
    from sessions_graph.graph import SessionsGraph, open_engine
    from sessions_graph.hooks.replay import replay_spool
    from sessions_graph.hooks.spool import spool_is_empty

    if settings.engine_name == "memgraph":
        _mute_library_logging()
    engine = open_engine(settings, fail_fast=True, wait_budget=HOOK_BUDGET_SECONDS)
    # Counted from here, after the imports: under load they can take longer
    # than the budget itself, and they hold no lock anyone waits for.
    deadline = time.monotonic() + HOOK_BUDGET_SECONDS
    graph = SessionsGraph(settings=settings, engine=engine)
    look_up: threading.Thread | None = None
    try:
        if not spool_is_empty(settings):
            replay_spool(graph, settings, deadline=deadline)
            if not spool_is_empty(settings):
                _queue_behind(payload, settings, "queued behind earlier spooled events")
                return None, "spooled (behind earlier events)"
        backlog = transcript_backlog(graph, payload)
        if backlog > HOOK_IMPORT_BYTES:
            # Importing it would take seconds: the background replay does,
            # and events after this one queue behind it (the spool is not
            # empty), so the transcript is still read in order.
            why = f"transcript backlog of {backlog} bytes, more than a hook imports"
            _queue_behind(payload, settings, why)
            return None, "spooled (transcript backlog, imported in the background)"
        outcome = handle_payload(graph, settings, payload, settings.user_id)
        context, look_up = _context(graph, settings, payload, outcome, started)
    finally:
        # A look-up still running holds the store: the process ends without
        # waiting for it (``__main__`` exits with os._exit), so it is left be.
        if look_up is None or not look_up.is_alive():
            graph.close()
    for n, warning in enumerate(outcome.warnings):
        log_line(settings.log_path, "WARN", f"{outcome.summary()}: {warning}", stderr=n == 0)
    log_line(settings.log_path, "INFO", outcome.summary())
    result = f"stored {outcome.added} action{'' if outcome.added == 1 else 's'}"
    if context is not None:
        from sessions_graph.hooks.block import CHARS_PER_TOKEN

        result += f", injected ~{-(-len(context) // CHARS_PER_TOKEN)} tokens"
    return context, result


def _context(
    graph: SessionsGraph,
    settings: Settings,
    payload: dict[str, Any],
    outcome: Outcome,
    started: float,
) -> tuple[str | None, threading.Thread | None]:
    """The hook output carrying context for this stored event (or None), and
    the look-up's thread. Never raises: the event is recorded already, and
    context is a bonus. The look-up runs in a thread so that it can be given
    up after ``INJECT_LOOKUP_SECONDS``: a query cannot be interrupted from
    here, on either engine, but the process can end without it."""
    if outcome.event not in INJECTING_EVENTS or outcome.user_id is None:
        return None, None
    if time.monotonic() - started > INJECT_WITHIN_SECONDS:
        outcome.warnings.append("store slow: no context injected")
        return None, None
    from sessions_graph.hooks.inject import context_for, hook_output

    user_id = outcome.user_id
    found: list[str | None] = []
    failed: list[Exception] = []

    def look_up() -> None:
        try:
            found.append(context_for(graph, settings, payload, user_id))
        except Exception as exc:
            failed.append(exc)

    worker = threading.Thread(target=look_up, name="sessions-graph-context", daemon=True)
    worker.start()
    worker.join(INJECT_LOOKUP_SECONDS)
    if worker.is_alive():
        outcome.warnings.append(
            f"context look-up took over {INJECT_LOOKUP_SECONDS:g} s: none injected"
        )
        return None, worker
    if failed:
        exc = failed[0]
        outcome.warnings.append(f"no context injected: {type(exc).__name__}: {exc}")
        return None, worker
    context = found[0] if found else None
    return (None if context is None else hook_output(outcome.event, context)), worker


def _queue_behind(payload: dict[str, Any], settings: Settings, why: str) -> None:
    """Spool this event for a background replay, which applies the spool in
    order (the next hook call or ``reconcile`` run would too): used when
    earlier events are still spooled (more than the budget could replay, or
    another process is replaying them), so that this one lands after them,
    and when the store stayed locked past the budget."""
    from sessions_graph.hooks.spawn import spawn_replay
    from sessions_graph.hooks.spool import spool_payload

    kept = spool_payload(settings, payload, user_id=settings.user_id)
    child = spawn_replay(settings)
    by = f"a background replay (pid {child.pid})" if child else "the replay under way"
    log_line(settings.log_path, "INFO", f"{why}: spooled as {kept.name}, applied by {by}")


def _mute_library_logging() -> None:
    """Keep library log records (the Bolt driver reports each failed connection
    or routing attempt) off stderr: with no handler anywhere, ``logging``'s
    last-resort handler would print them. Our own line goes to the log file.
    Only on the Memgraph path: its driver imports ``logging`` anyway, and the
    embedded path must not pay for it."""
    import logging

    logging.getLogger().addHandler(logging.NullHandler())


def _read_payload(argv: list[str]) -> Any:
    # Codex `notify` passes the JSON as the last argument; hooks use stdin.
    if argv and argv[-1].lstrip().startswith("{"):
        raw = argv[-1].encode("utf-8", "surrogateescape")
    elif sys.stdin is None:  # fd 0 was closed when the interpreter started
        raise PayloadError("no payload on stdin: it is closed")
    else:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload larger than {MAX_PAYLOAD_BYTES} bytes")
    if not raw.strip():
        raise PayloadError("empty payload on stdin")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"payload is not JSON: {str(exc)[:100]}") from None
