"""Replaying the spool: applying spooled payloads in arrival order, one
replayer at a time, as the hook would have applied them on time.

Beside the hook's flow, not inside it: ``handle`` applies a payload,
``spool`` keeps the ones the store could not take, and this module takes
them from the spool back through ``handle``. It is run by the hook itself
(before a new event, so that nothing overtakes what waits), by the detached
drain (``hooks.drain``) and by ``reconcile --pending``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.hooks.handle import PayloadError, handle_payload, is_store_fault
from sessions_graph.hooks.log import log_line, open_private, private_dirs
from sessions_graph.hooks.spool import CLAIM, pending_files, replay_lock, spool_dirs

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings


def replay_spool(graph: SessionsGraph, settings: Settings, *, deadline: float | None = None) -> int:
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
        claimed = path.with_name(f"{path.name}{CLAIM}{os.getpid()}")
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
            if CLAIM in entry.name:
                original = entry.name.split(CLAIM, 1)[0]
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
