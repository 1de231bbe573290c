"""Told Time: the days a text tells of, read from its relative time cues and
the moment it was said.

"My colleagues and I went to a convention last month", said on 18 April
2023, tells of March 2023. The turn index stores each turn's Told Time (the
span of its cues), and recall's dates lane matches the windows a question
names against it as well as against when turns were said: "what did John
attend in March 2023?" finds the turn said in April.

Only cues that fix a span on the calendar count: "yesterday", "last
night", "the day before yesterday", "tomorrow", "N days / weeks / months /
years ago", "last" or "next" week, weekend, month, year, weekday or month
name, "this past week", "the other day". Vaguer ones ("recently", "a while
back") and the present ("today", "this week") add nothing a timestamp does
not already say.

Kept to ``re`` and ``datetime``: the engines compute it on the hook's write
path, where a substring test skips the regular expression for most texts
(``TOLD_PARTS``), and the pattern is compiled on first need.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

#: Where in a text cues are looked for: the hook path runs this on every
#: action, and a tool result's 8 KB would cost a regular expression's pass.
TOLD_CHARS = 600
#: Every cue holds one of these (lowercased): ``in`` finds them in C, and
#: the pattern runs only on the texts that have one.
TOLD_PARTS = ("yesterday", "tomorrow", " ago", "last ", "next ", "past week", "other day")

_NUMBERS = "one two three four five six seven eight nine ten eleven twelve".split()
_COUNTS = {"a": 1} | {word: n for n, word in enumerate(_NUMBERS, start=1)}
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: A weekday's name, or its usual short form ("last Fri"); not "sat", which
#: is mostly the verb ("when I last sat with her").
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sun)(?:day)?|saturday"
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october"
    r"|november|december)"
)
#: The cues, matched in lowercased text, in ASCII letters only (``(?a)``, as
#: month names in questions): each alternative names its group, ``_span``
#: reads it. The lookahead names every letter a cue can start with: ``re``
#: then skips the other positions at once (over 600 characters, 20 us
#: instead of 50).
_TOLD = (
    r"(?a)(?=[0-9aefilnosty])\b(?:(?P<two_back>the day before yesterday)"
    r"|(?P<two_ahead>the day after tomorrow)"
    r"|(?P<yesterday>yesterday|last night)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<count>\d{1,2}|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?P<couple>a couple(?: of)?)|(?P<few>a few|several))"
    r" (?P<unit>day|week|month|year)s? ago"
    r"|(?P<past_week>this past week|the past week)"
    r"|(?P<other_day>the other day)"
    r"|(?P<side>last|next) (?:(?P<span>weekend|week|month|year)"
    rf"|(?P<weekday>{_WEEKDAY})|(?P<month>{_MONTH}))"
    r")\b"
)

#: How far from today a question's own cue may reach and still name a
#: window (``question_windows``).
QUESTION_REACH_DAYS = 62

Span = tuple[date, date]  # the first day told of, and the day after the last


def told_spans(text: str, said: date) -> list[Span]:
    """Each cue's span of days in ``text`` (its first ``TOLD_CHARS``), said
    on ``said``, in the order they are written."""
    head = text[:TOLD_CHARS].lower()
    if not any(part in head for part in TOLD_PARTS):
        return []
    return [_span(m, said) for m in re.finditer(_TOLD, head)]


def told_window(text: str, said_at: str | None) -> tuple[str, str] | None:
    """A turn's Told Time: the span from its first cue's first day to its last
    one's end, as store timestamps ``[since, until)``; None when it has no cue
    or no time it was said (``said_at``, a store timestamp)."""
    if not said_at:
        return None
    try:
        said = date.fromisoformat(said_at[:10])
    except ValueError:  # a file written by hand or an older build: no day to count from
        return None
    spans = told_spans(text, said)
    if not spans:
        return None
    return _stamp(min(s for s, _ in spans)), _stamp(max(e for _, e in spans))


def question_windows(question: str, now: str) -> tuple[list[tuple[str, str]], str]:
    """The windows ``[start, end)`` a question's own cues name ("what did we
    decide yesterday?"), counted from ``now`` (a store timestamp) and widened
    by a day on either side (the asker's day is not always UTC's), and the
    question with those cues' words blanked out. A cue whose days are all
    more than ``QUESTION_REACH_DAYS`` from now names none: "where did she move from
    four years ago?" is mostly about what a turn told ("four years ago",
    said when it was), not about the year four years before today."""
    if not any(part in question[:TOLD_CHARS].lower() for part in TOLD_PARTS):
        return [], question
    said = date.fromisoformat(now[:10])
    reach, day = timedelta(days=QUESTION_REACH_DAYS), timedelta(days=1)
    windows, rest = [], question
    for match in re.finditer(_TOLD, question[:TOLD_CHARS], re.IGNORECASE):
        start, end = _span(match, said)
        if end < said - reach or start > said + reach:
            continue
        windows.append((_stamp(start - day), _stamp(end + day)))
        rest = rest[: match.start()] + " " * len(match[0]) + rest[match.end() :]
    return windows, rest


def _span(match: re.Match[str], said: date) -> Span:
    """The span of one cue (matched in any case)."""
    cue = {name: (value or "").lower() for name, value in match.groupdict().items()}
    day = timedelta(days=1)
    if cue["two_back"]:
        return said - 2 * day, said - day
    if cue["two_ahead"]:
        return said + 2 * day, said + 3 * day
    if cue["yesterday"]:
        return said - day, said
    if cue["tomorrow"]:
        return said + day, said + 2 * day
    if cue["unit"]:
        return _ago(cue, said)
    if cue["past_week"]:
        return said - 7 * day, said
    if cue["other_day"]:
        return said - 6 * day, said
    step = 1 if cue["side"] == "next" else -1
    if cue["weekday"]:
        wanted = _WEEKDAYS.index(cue["weekday"][:3])
        # The nearest such day before (after) the day said, never that day.
        gap = ((said.weekday() - wanted) if step < 0 else (wanted - said.weekday())) % 7 or 7
        told = said + step * gap * day
        return told, told + day
    if cue["month"]:
        wanted = _MONTHS.index(cue["month"][:3]) + 1
        year = said.year
        if step < 0 and wanted >= said.month:
            year -= 1
        elif step > 0 and wanted <= said.month:
            year += 1
        return _month(year, wanted, 0)
    span = cue["span"]
    if span == "week":  # the calendar week before (after) the one said in
        monday = said - said.weekday() * day + step * 7 * day
        return monday, monday + 7 * day
    if span == "weekend":
        gap = ((said.weekday() - 5) if step < 0 else (5 - said.weekday())) % 7 or 7
        saturday = said + step * gap * day
        return saturday, saturday + 2 * day
    if span == "month":
        return _month(said.year, said.month, step)
    return date(said.year + step, 1, 1), date(said.year + step + 1, 1, 1)


def _ago(cue: dict[str, str], said: date) -> Span:
    """ "N units ago": that day, that week (a few days either side), that
    calendar month or year; "a few" / "several" is two to five of them."""
    if cue["couple"]:
        low = high = 2
    elif cue["few"]:
        low, high = 2, 5
    else:
        count = cue["count"]
        low = high = _COUNTS[count] if count in _COUNTS else int(count)
    unit = cue["unit"]
    if unit == "day":
        return said - timedelta(days=high), said - timedelta(days=low - 1)
    if unit == "week":
        return said - timedelta(days=7 * high + 3), said - timedelta(days=7 * low - 4)
    if unit == "month":
        return _month(said.year, said.month, -high)[0], _month(said.year, said.month, -low)[1]
    return date(said.year - high, 1, 1), date(said.year - low + 1, 1, 1)


def _month(year: int, month: int, shift: int) -> Span:
    """The calendar month ``shift`` months from ``year``-``month``."""
    first = year * 12 + month - 1 + shift
    after = first + 1
    return date(first // 12, first % 12 + 1, 1), date(after // 12, after % 12 + 1, 1)


def _stamp(day: date) -> str:
    """Midnight UTC of ``day`` in the stores' timestamp format."""
    return datetime.combine(day, time(), tzinfo=timezone.utc).isoformat(timespec="microseconds")
