"""The spool: hook payloads the store could not take, kept until it can.

One file per event in ``settings.spool_dir``. Names sort in arrival order
(nanosecond clock, then pid, then a per-process counter) and every file is
written to a dot-prefixed temp name and renamed, so a reader never sees half
a payload. One process replays at a time (``replay``), under the advisory
lock kept here (so events land in order), and claims each file by renaming
it before handling it; a claim found under the lock was left by a replayer
that died, and is put back.
Since recording is idempotent, even a file replayed twice (a replayer killed
after writing, before deleting) stores nothing twice. A payload the store
rejects as invalid (or that fails for any reason but the store) is moved to
``rejected/`` instead of being retried forever.

A spool file is ``{"user_id": ..., "payload": {...}}`` (a rejected one also
says why, in ``reason``): the user the event
belongs to is resolved when it is spooled and used again on replay, so that
an event spooled by alice's hook stays alice's whoever replays it (a cron
job, another account sharing the state directory). ``user_id`` is null only
for an event kept because the settings themselves were unusable (see
``runner``): that one is applied under the replayer's user_id, i.e. the
corrected settings. (No build that wrote bare payloads was ever released,
so no older format is read.)
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.hooks.log import open_private, private_dirs

if TYPE_CHECKING:
    from sessions_graph.settings import Settings

#: Payload fields never needed to replay an event; dropped to keep spool files small.
_BULKY_FIELDS = ("tool_input", "tool_response", "last_assistant_message")
#: What a replayer appends to a file's name to claim it (``replay``).
CLAIM = ".claim-"
#: The replay lock's file in the spool (dot-prefixed: never taken for an event).
_LOCK = ".replay.lock"
#: The drain's lock, held for its whole run (opening the store, which may
#: migrate it for minutes, then replaying): one drain at a time.
DRAIN_LOCK = ".drain.lock"

_counter = 0


def spool_payload(
    settings: Settings,
    payload: dict[str, Any],
    *,
    user_id: str | None,
    rejected: bool = False,
    reason: str | None = None,
) -> Path:
    """Write ``payload`` and the ``user_id`` it belongs to (None: whoever
    replays it) to the spool (or, with ``rejected``, set it aside in
    ``rejected/`` for a human, with the ``reason``) atomically; return the
    file's path."""
    global _counter
    _counter += 1
    directory = settings.spool_dir / "rejected" if rejected else settings.spool_dir
    private_dirs(settings.spool_dir.parent, settings.spool_dir, directory)
    # With a transcript, the bulky fields are also in it; without one, keep all.
    bulky = _BULKY_FIELDS if payload.get("transcript_path") else ()
    kept = {k: v for k, v in payload.items() if k not in bulky}
    name = f"{time.time_ns():020d}-{os.getpid():08d}-{_counter:04d}.json"
    tmp = directory / f".{name}.tmp"
    try:
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as fh:
            # ASCII escapes: a lone surrogate in the payload cannot be written as UTF-8.
            record: dict[str, Any] = {"user_id": user_id, "payload": kept}
            if reason is not None:
                record["reason"] = reason
            json.dump(record, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, directory / name)
    except BaseException:
        # A full disk: the event is lost either way, but not the space of
        # one more temp file per hook.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return directory / name


def spool_dirs(settings: Settings) -> list[Path]:
    """Where spooled payloads may be: the configured spool, and the default
    one, where a hook keeps an event when the settings do not load at all
    (so a ``state_dir`` fixed later does not strand it)."""
    from sessions_graph.settings import default_state_dir

    fallback = default_state_dir() / "spool"
    return [settings.spool_dir] + ([fallback] if fallback != settings.spool_dir else [])


def pending_files(settings: Settings) -> list[Path]:
    """Spooled payloads not claimed by anyone, oldest first (names sort in
    arrival order, whichever spool holds them)."""
    found = []
    for directory in spool_dirs(settings):
        try:
            names = os.listdir(directory)
        except FileNotFoundError:
            continue
        found += [directory / n for n in names if n.endswith(".json") and n[0] != "."]
    return sorted(found, key=lambda path: path.name)


def spool_is_empty(settings: Settings) -> bool:
    """Whether no event waits in the spool: none spooled, and none claimed by
    a replayer that has not applied it yet (an event must not overtake it)."""
    for directory in spool_dirs(settings):
        try:
            names = os.listdir(directory)
        except OSError:
            # Missing, or unusable (the state directory is a file, or not
            # ours): nothing there can be replayed, and the event at hand
            # must still reach the store rather than be lost with the spool.
            continue
        if any((n.endswith(".json") and n[0] != ".") or CLAIM in n for n in names):
            return False
    return True


@contextmanager
def replay_lock(settings: Settings, name: str = _LOCK) -> Iterator[bool]:
    """Hold the spool's replay lock (or the lock ``name``) if no other
    process does; yields whether it is held. An advisory ``flock`` on a file
    in the spool: the kernel lets go of it when its holder exits, however it
    exits, so it never goes stale."""
    import fcntl

    private_dirs(settings.spool_dir.parent, settings.spool_dir)
    fd = os.open(settings.spool_dir / name, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def replay_running(settings: Settings) -> bool:
    """Whether another process holds the replay lock right now, or a drain
    runs (it may be migrating the store before it replays)."""
    for name in (_LOCK, DRAIN_LOCK):
        with replay_lock(settings, name) as held:
            if not held:
                return True
    return False
