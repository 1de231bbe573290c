"""Time for recall: the ``since`` / ``until`` bounds, and dates a question names.

A question such as "what did we decide on October 13, 2023?" names the day
it is about; matching those words as keywords finds any turn that mentions a
13 or a 2023. Instead the date becomes a window, and the date lane searches
the question's other words among the turns of that window only. A month
named without its year ("in June") is that month of any year. (A question's
relative cues, "what did we decide yesterday?", are read by
``index_text.told.question_windows``: the same cues a turn's Told Time is
read from.)
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from sessions_graph.clock import parse_timestamp
from sessions_graph.errors import MemoryValidationError

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
#: How far a named day's window reaches back, and forward: people tell of
#: an event days after it happened ("last Friday my car broke down"), so the
#: turns about a day come mostly after it.
DAYS_BEFORE = 1
DAYS_AFTER = 3

#: Month names match in any case of ASCII letters only (``(?a:...)``):
#: ignoring case over Unicode, "aprıl" (a dotless ı) would match "april" and
#: name no month in ``_MONTHS``.
_MONTH = "(?P<month>(?a:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r"))\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
#: Most specific first: a full date, then a month of a year, then a year.
#: Sources, compiled on first need (``re``'s cache keeps them): every one
#: needs a year's "19" or "20", which most questions do not hold, and
#: compiling these alternations of month names is most of what a recall
#: process spends on dates.
_PATTERNS: list[tuple[str, int]] = [
    (r"\b(?P<year>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<day>[0-3]\d)\b", 0),
    (rf"\b{_MONTH}\s+{_DAY}(?:,\s*|\s+){_YEAR}\b", re.IGNORECASE),
    (rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,\s*|\s+){_YEAR}\b", re.IGNORECASE),
    (rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE),
    (rf"\b(?:in|during|of|since)\s+{_YEAR}\b", re.IGNORECASE),
]
_CENTURIES = ("19", "20")


#: A month named without its year ("in June", "early May", "mid-March"),
#: after a word that says it is one, so that "may" the verb is no month.
_BARE_MONTH = rf"\b(?:in|during|of|last|this|early|late|mid)[\s-]+{_MONTH}(?![\w-])"


def to_utc(value: object, field: str) -> str | None:
    """A ``datetime`` or ISO 8601 string as the stores' timestamp format (UTC,
    microseconds); naive times are taken as UTC. None stays None; anything
    else, or a time outside years 1-9999 in UTC, is refused."""
    if value is None:
        return None
    if not isinstance(value, (str, datetime)):
        raise MemoryValidationError(f"{field} must be a datetime or an ISO 8601 date")
    moment = parse_timestamp(value)
    if moment is None:
        raise MemoryValidationError(
            f"{field} must be a datetime or an ISO 8601 date within years 1-9999 UTC,"
            f" not {str(value)[:60]!r}"
        )
    return moment


def named_windows(question: str) -> tuple[list[tuple[str, str]], str]:
    """The time windows ``[start, end)`` that the question names (a day, a
    month, a year), and the question without those words. Dates are taken as
    UTC days; a day window is widened by a day each side so that a time zone
    never moves an event out of it."""
    windows: list[tuple[str, str]] = []
    rest = question
    if not any(century in question for century in _CENTURIES):
        return windows, rest  # no year, so no date any pattern takes
    for source, flags in _PATTERNS:
        pattern = re.compile(source, flags)
        for match in pattern.finditer(rest):
            window = _window(match)
            if window:
                windows.append(window)
        rest = pattern.sub(" ", rest)
    return windows, rest


def named_months(question: str) -> tuple[list[int], str]:
    """The months the question names without a year ("what did she paint
    in October?"), and the question without them. Which year is meant is
    not said, so the date lane takes that month of any year."""
    lowered = question.lower()
    if not any(name in lowered for name in _MONTHS):
        return [], question  # where no month's name is, none is named
    pattern = re.compile(_BARE_MONTH, re.IGNORECASE)
    months = [_MONTHS[m.group("month").lower()] for m in pattern.finditer(question)]
    return list(dict.fromkeys(months)), pattern.sub(" ", question)


def month_of(timestamp: str | None) -> int | None:
    """The month of a stored timestamp ("2023-06-27T..." -> 6): stored ones
    are all in one format (``clock.parse_timestamp``), or None when the
    action came without one."""
    return int(timestamp[5:7]) if timestamp else None


def _window(match: re.Match[str]) -> tuple[str, str] | None:
    """The window of a date pattern's match: every pattern names a year."""
    parts = match.groupdict()
    number, name, day = parts.get("m"), parts.get("month"), parts.get("day")
    month = int(number) if number else _MONTHS[name.lower()] if name else None
    year = int(match["year"])
    try:
        if day and month:
            named = datetime(year, month, int(day), tzinfo=timezone.utc)
            start = named - timedelta(days=DAYS_BEFORE)
            end = named + timedelta(days=1 + DAYS_AFTER)
        elif month:
            start = datetime(year, month, 1, tzinfo=timezone.utc)
            end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
        else:
            start = datetime(year, 1, 1, tzinfo=timezone.utc)
            end = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
    except ValueError:  # "February 31": not a date, so not a window
        return None
    return (start.isoformat(timespec="microseconds"), end.isoformat(timespec="microseconds"))
