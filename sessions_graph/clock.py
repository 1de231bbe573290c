"""The one clock: every timestamp sessions-graph writes comes from here.

Timestamps are ISO 8601 UTC with microseconds (``2026-11-29T13:37:00.000000+00:00``),
one fixed format so that they sort as text on both engines.
"""

from __future__ import annotations

import re
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


_FRACTION = re.compile(r"\.(\d+)")


def parse_timestamp(value: str | datetime | None) -> str | None:
    """A runtime's or caller's timestamp in our one format (UTC, microseconds),
    so that timestamps sort as text on both engines; None if it is not ISO 8601
    or has no UTC equivalent within years 1-9999 (``0001-01-01T00:00:00+05:00``,
    which ``astimezone`` fails on with ``OverflowError``, not ``ValueError``).
    Naive times are UTC; a trailing ``Z`` or ``z`` and surrounding blanks are
    taken."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        # Python 3.10's parser takes only 3 or 6 fraction digits: make them 6.
        text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), value.strip(), count=1)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")
    except OverflowError:
        return None
