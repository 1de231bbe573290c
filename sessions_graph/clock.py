"""The one clock: every timestamp sessions-graph writes comes from here.

Timestamps are ISO 8601 UTC with microseconds (``2026-11-29T13:37:00.000000+00:00``),
one fixed format so that they sort as text on both engines.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

_last_stamp = 0.0


def utcnow() -> str:
    """Now, strictly increasing within this process, so that "newest first" is
    well defined for writes made in the same microsecond."""
    global _last_stamp
    now = max(time.time(), _last_stamp + 1e-6)
    _last_stamp = now
    return datetime.fromtimestamp(now, tz=timezone.utc).isoformat(timespec="microseconds")
