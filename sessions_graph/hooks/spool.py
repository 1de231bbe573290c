"""The spool: hook payloads the store could not take, kept until it can.

One file per event in ``settings.spool_dir``. Names sort in arrival order
(nanosecond clock, then pid, then a per-process counter) and every file is
written to a dot-prefixed temp name and renamed, so a reader never sees half
a payload. ``replay_spool`` claims a file by renaming it before handling it,
so concurrent replayers never take the same file; since recording is
idempotent, even a file replayed twice (a replayer killed after writing,
before deleting) stores nothing twice. A payload the store rejects as invalid
(or that fails for any reason but the store) is moved to ``rejected/``
instead of being retried forever.

A spool file is ``{"user_id": ..., "payload": {...}}``: the user the event
belongs to is resolved when it is spooled and used again on replay, so that
an event spooled by alice's hook stays alice's whoever replays it (a cron
job, another account sharing the state directory). ``user_id`` is null only
for an event kept because the settings themselves were unusable (see
``runner``): that one is applied under the replayer's user_id, i.e. the
corrected settings. (No build that wrote bare payloads was ever released,
so no older format is read.)
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.hooks.handle import PayloadError, handle_payload, is_store_fault
from sessions_graph.hooks.log import log_line, open_private, private_dirs

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Payload fields never needed to replay an event; dropped to keep spool files small.
_BULKY_FIELDS = ("tool_input", "tool_response", "last_assistant_message")
#: A claim older than this belongs to a replayer that died; it is released.
STALE_CLAIM_SECONDS = 300.0
_CLAIM = ".claim-"

_counter = 0


def spool_payload(
    settings: Settings,
    payload: dict[str, Any],
    *,
    user_id: str | None,
    rejected: bool = False,
) -> Path:
    """Write ``payload`` and the ``user_id`` it belongs to (None: whoever
    replays it) to the spool (or, with ``rejected``, set it aside in
    ``rejected/`` for a human) atomically; return the file's path."""
    global _counter
    _counter += 1
    directory = settings.spool_dir / "rejected" if rejected else settings.spool_dir
    private_dirs(settings.spool_dir.parent, settings.spool_dir, directory)
    # With a transcript, the bulky fields are also in it; without one, keep all.
    bulky = _BULKY_FIELDS if payload.get("transcript_path") else ()
    kept = {k: v for k, v in payload.items() if k not in bulky}
    name = f"{time.time_ns():020d}-{os.getpid():08d}-{_counter:04d}.json"
    tmp = directory / f".{name}.tmp"
    with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as fh:
        # ASCII escapes: a lone surrogate in the payload cannot be written as UTF-8.
        json.dump({"user_id": user_id, "payload": kept}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, directory / name)
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


def replay_spool(graph: SessionsGraph, settings: Settings) -> int:
    """Apply spooled payloads in arrival order; return how many were applied.

    Stops at the first store failure (the store is still down: the file goes
    back to the spool, in its place). Invalid payloads go to ``rejected/``.
    """
    _release_stale_claims(settings)
    replayed = 0
    for path in pending_files(settings):
        claimed = path.with_name(f"{path.name}{_CLAIM}{os.getpid()}")
        try:
            os.rename(path, claimed)
        except FileNotFoundError:
            continue  # another process claimed it first
        os.utime(claimed)  # the claim's age, for stale-claim release
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
    rejected = settings.spool_dir / "rejected"
    private_dirs(rejected)
    os.replace(claimed, rejected / name)
    log_line(settings.log_path, "ERROR", f"rejected spooled {name}: {exc}")


def _release_stale_claims(settings: Settings) -> None:
    now = time.time()
    for directory in spool_dirs(settings):
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            continue
        for entry in entries:
            if _CLAIM not in entry.name:
                continue
            try:
                if now - entry.stat().st_mtime > STALE_CLAIM_SECONDS:
                    original = entry.name.split(_CLAIM, 1)[0]
                    os.rename(entry.path, directory / original)
            except FileNotFoundError:
                continue  # its replayer finished meanwhile
