"""One-line reporting for the hook path.

A hook must never disturb the agent, so problems become one line on stderr
(which the agent shows at most as a warning) plus the same line appended to
``settings.log_path`` for later diagnosis. ``logging`` is not used: its
import and handler setup cost more than the whole write they would report.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

#: Longest message written; a hostile payload must not flood the log.
MAX_MESSAGE_CHARS = 500


def _clean(message: str) -> str:
    # Runs of whitespace (a driver's multi-line error) become one space; other
    # control characters would split or forge log lines.
    text = "".join(ch if ch.isprintable() else "?" for ch in " ".join(message.split()))
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def private_dirs(*directories: Path) -> None:
    """Create each directory in turn (parents first), 0700 when it is new:
    the state directory holds event payloads and logs about them."""
    for directory in directories:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)


def open_private(path: Path, flags: int) -> int:
    """``os.open`` with mode 0600 for a file it creates."""
    return os.open(path, flags | os.O_CREAT, 0o600)


def to_stderr(line: str) -> None:
    """Write one line to stderr, or nowhere if the runtime closed it. Never
    ``print(file=sys.stderr)`` alone: with fd 2 closed at start-up,
    ``sys.stderr`` is None and ``print`` would write to stdout, which Claude
    Code adds to the conversation."""
    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):  # closed while we ran
        print(line, file=sys.stderr)


def log_line(log_path: Path, level: str, message: str, *, stderr: bool = False) -> None:
    """Append ``level message`` to the log file (and stderr if asked); never raises."""
    text = _clean(message)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    if stderr:
        to_stderr(f"sessions-graph: {text}")
    try:
        private_dirs(log_path.parent)
        fd = open_private(log_path, os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {level} pid={os.getpid()} {text}\n")
    except OSError:
        pass  # the log is best effort: losing a diagnostic must not fail the hook
