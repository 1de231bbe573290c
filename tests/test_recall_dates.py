"""Dates for recall: the windows a question's dates become, at the ends of
months and years and on leap days, and the caller's own time bounds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from sessions_graph import MemoryValidationError
from sessions_graph.recall.dates import month_of, named_months, named_windows, to_utc


def windows(question: str) -> list[tuple[str, str]]:
    return named_windows(question)[0]


def day(date: str) -> str:
    """Midnight UTC of ``date`` (YYYY-MM-DD) as windows write it."""
    return f"{date}T00:00:00.000000+00:00"


def test_a_month_of_a_year_runs_from_its_first_day_to_the_next_months() -> None:
    assert windows("what did we plan in December 2023?") == [(day("2023-12-01"), day("2024-01-01"))]
    assert windows("in January 2024") == [(day("2024-01-01"), day("2024-02-01"))]
    assert windows("the November of 2023 release") == [(day("2023-11-01"), day("2023-12-01"))]
    assert windows("Feb, 2024") == [(day("2024-02-01"), day("2024-03-01"))]


def test_a_year_runs_from_its_first_day_to_the_next_years() -> None:
    assert windows("what did we ship in 2025?") == [(day("2025-01-01"), day("2026-01-01"))]
    assert windows("everything since 1999") == [(day("1999-01-01"), day("2000-01-01"))]
    # A number that only looks like a year is not one.
    assert windows("the 2025 budget") == [] and windows("in 2125") == []


def test_a_day_reaches_a_day_back_and_three_forward_across_month_and_year_ends() -> None:
    assert windows("on December 31, 2023") == [(day("2023-12-30"), day("2024-01-04"))]
    assert windows("on 2024-01-01") == [(day("2023-12-31"), day("2024-01-05"))]
    assert windows("on the 1st of March 2023") == [(day("2023-02-28"), day("2023-03-05"))]


def test_a_leap_day_is_a_day_only_in_a_leap_year() -> None:
    assert windows("on 29th of February 2024") == [(day("2024-02-28"), day("2024-03-04"))]
    assert windows("on February 29, 2023") == [] and windows("on 2023-02-29") == []
    assert windows("on 2024-02-30") == []


@pytest.mark.parametrize(
    "question",
    ["Sept. 5, 2023", "September 5 2023", "5 sep 2023", "5th of Sept 2023", "2023-09-05"],
)
def test_a_date_is_read_however_its_month_is_written(question: str) -> None:
    assert windows(f"what happened on {question}?") == [(day("2023-09-04"), day("2023-09-09"))]


@pytest.mark.parametrize("month", ["aprıl", "AUGUſT", "APRİL"])
def test_a_look_alike_of_a_month_names_none(month: str) -> None:
    """A dotless ı or a long ſ is a letter that matches an ASCII one when case
    is ignored over Unicode: such a word is no month (it used to be matched,
    then looked up, and recall failed on it), and stays a word of the question."""
    assert named_windows(f"what did we ship on 3 {month} 2024?") == (
        [],
        f"what did we ship on 3 {month} 2024?",
    )
    assert named_months(f"what did we ship in {month}?") == ([], f"what did we ship in {month}?")
    assert named_months("what did we ship in APRIL?")[0] == [4]


def test_the_dates_named_leave_the_other_words_of_the_question() -> None:
    found, rest = named_windows("did Mel paint on 2023-10-13 or in 2022?")
    assert found == [(day("2023-10-12"), day("2023-10-17")), (day("2022-01-01"), day("2023-01-01"))]
    assert rest.split() == ["did", "Mel", "paint", "on", "or", "?"]


def test_the_month_of_a_stored_timestamp() -> None:
    assert month_of("2023-06-27T10:00:00.000000+00:00") == 6
    assert month_of("2023-12-01T00:00:00.000000+00:00") == 12
    assert month_of(None) is None


def test_a_time_bound_is_a_datetime_or_an_iso_date_in_utc() -> None:
    assert to_utc(None, "since") is None
    assert to_utc("2026-01-01", "since") == day("2026-01-01")
    plus_two = timezone(timedelta(hours=2))
    assert to_utc(datetime(2026, 1, 1, 1, tzinfo=plus_two), "until") == (
        "2025-12-31T23:00:00.000000+00:00"
    )
    with pytest.raises(MemoryValidationError, match="since must be a datetime or an ISO 8601"):
        to_utc(20260101, "since")
    # Midnight at +05:00 on the first day of year 1 is in year 0 in UTC.
    with pytest.raises(MemoryValidationError, match=r"until .* within years 1-9999 UTC"):
        to_utc("0001-01-01T00:00:00+05:00", "until")
