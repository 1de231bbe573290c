"""The spool: hook payloads the store could not take, kept until it can.

One file per event in ``settings.spool_dir``. Names sort in arrival order
(nanosecond clock, then pid, then a per-process counter) and every file is
written to a dot-prefixed temp name and renamed, so a reader never sees half
a payload. One process replays at a time, under an advisory lock (so events
land in order), and claims each file by renaming it before handling it; a
claim found under the lock was left by a replayer that died, and is put back.
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

from sessions_graph.hooks.handle import PayloadError, handle_payload, is_store_fault
from sessions_graph.hooks.log import log_line, open_private, private_dirs

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Payload fields never needed to replay an event; dropped to keep spool files small.
_BULKY_FIELDS = ("tool_input", "tool_response", "last_assistant_message")
_CLAIM = ".claim-"
#: The replay lock's file in the spool (dot-prefixed: never taken for an event).
_LOCK = ".replay.lock"

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
        if any((n.endswith(".json") and n[0] != ".") or _CLAIM in n for n in names):
            return False
    return True


def replay_spool(
    graph: SessionsGraph, settings: Settings, *, deadline: float | None = None
) -> int:
    """Apply spooled payloads in arrival order; return how many were applied.

    One process replays at a time (``replay_lock``), so that events land in
    order; if another one is replaying, this returns 0 at once, and that one
    takes what is spooled meanwhile (it looks again after letting go of the
    lock). ``deadline`` (a ``time.monotonic()`` instant) stops the replay
    between two files: the rest stays spooled, in order, for the next
    replayer. Stops at the first store failure (the store is still down: the
    file goes back to the spool, in its place). Invalid payloads go to
    ``rejected/``.
    """
    replayed = 0
    while True:
        with replay_lock(settings) as held:
            if not held:
                return replayed
            _release_claims(settings)
            replayed += _replay_files(graph, settings, deadline)
        # A file spooled by a process that found the lock held is ours to take.
        if not pending_files(settings) or _past(deadline):
            return replayed


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _replay_files(graph: SessionsGraph, settings: Settings, deadline: float | None) -> int:
    replayed = 0
    for path in pending_files(settings):
        if _past(deadline):
            break
        claimed = path.with_name(f"{path.name}{_CLAIM}{os.getpid()}")
        try:
            os.rename(path, claimed)
        except FileNotFoundError:
            continue  # gone meanwhile (replayed by a process of an older version)
        try:
            payload, user_id = _read_record(claimed)
            outcome = handle_payload(graph, settings, payload, user_id or settings.user_id)
        except Exception as exc:
            if is_store_fault(exc):
                os.rename(claimed, path)
                raise
            _reject(settings, claimed, path.name, exc)
            continue
        claimed.unlink()
        replayed += 1
        log_line(settings.log_path, "INFO", f"replayed {path.name}: {outcome.summary()}")
    return replayed


@contextmanager
def replay_lock(settings: Settings) -> Iterator[bool]:
    """Hold the spool's replay lock if no other process does; yields whether
    it is held. An advisory ``flock`` on a file in the spool: the kernel lets
    go of it when its holder exits, however it exits, so it never goes stale."""
    import fcntl

    private_dirs(settings.spool_dir.parent, settings.spool_dir)
    fd = os.open(settings.spool_dir / _LOCK, os.O_RDWR | os.O_CREAT, 0o600)
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
    """Whether another process holds the replay lock right now."""
    with replay_lock(settings) as held:
        return not held


def _read_record(path: Path) -> tuple[Any, str | None]:
    """(payload, user_id) of a spool file."""
    record = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(record, dict) or "payload" not in record:
        raise PayloadError("not a spool record: no payload")
    return record["payload"], record.get("user_id")


def _reject(settings: Settings, claimed: Path, name: str, exc: Exception) -> None:
    """Set a spooled file aside in ``rejected/``, with the reason in it when it
    is a spool record (a file that is not one is moved as it is)."""
    rejected = settings.spool_dir / "rejected"
    private_dirs(rejected)
    reason = f"{type(exc).__name__}: {exc}"
    try:
        record = json.loads(claimed.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict):
        tmp = rejected / f".{name}.tmp"
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as fh:
            fh.write(json.dumps({**record, "reason": reason}))
        os.replace(tmp, rejected / name)
        claimed.unlink()
    else:
        os.replace(claimed, rejected / name)
    log_line(settings.log_path, "ERROR", f"rejected spooled {name}: {reason}")


def _release_claims(settings: Settings) -> None:
    """Put back files claimed by a replayer that died mid-replay (killed after
    its claim, before its delete). Called under the replay lock, so every
    claim left is such a one; being back under their own names, they are
    replayed in their place."""
    for directory in spool_dirs(settings):
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            continue
        for entry in entries:
            if _CLAIM in entry.name:
                original = entry.name.split(_CLAIM, 1)[0]
                with contextlib.suppress(FileNotFoundError):
                    os.rename(entry.path, directory / original)
            elif entry.name.endswith(".json.tmp") and _stale(entry):
                # Left by a write that failed (a full disk, before writers
                # removed their own); one being written is seconds old at most.
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


#: Age past which a spool temp file is abandoned, not being written.
_STALE_TMP_SECONDS = 600


def _stale(entry: os.DirEntry[str]) -> bool:
    try:
        return time.time() - entry.stat().st_mtime > _STALE_TMP_SECONDS
    except OSError:
        return False
