"""Told Time (``index_text.told``): the days a turn's relative time cues
tell of, counted from the day it was said."""

from __future__ import annotations

from datetime import date

import pytest

from sessions_graph.index_text.told import (
    QUESTION_REACH_DAYS,
    TOLD_CHARS,
    question_windows,
    told_spans,
    told_window,
)

#: A Tuesday.
TUESDAY = date(2023, 4, 18)


def d(month: int, day: int, year: int = 2023) -> date:
    return date(year, month, day)


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("yesterday we shipped it", (d(4, 17), d(4, 18))),
        ("Last night the build broke", (d(4, 17), d(4, 18))),
        ("the day before yesterday", (d(4, 16), d(4, 17))),
        ("tomorrow I deploy", (d(4, 19), d(4, 20))),
        ("the day after tomorrow", (d(4, 20), d(4, 21))),
        ("3 days ago", (d(4, 15), d(4, 16))),
        ("one day ago", (d(4, 17), d(4, 18))),
        ("a few days ago", (d(4, 13), d(4, 17))),
        ("several days ago", (d(4, 13), d(4, 17))),
        # That week, three days either side of the day seven days back.
        ("a week ago", (d(4, 8), d(4, 15))),
        ("two weeks ago", (d(4, 1), d(4, 8))),
        ("a couple of weeks ago", (d(4, 1), d(4, 8))),
        ("a couple weeks ago", (d(4, 1), d(4, 8))),
        ("two months ago", (d(2, 1), d(3, 1))),
        ("a few months ago", (d(11, 1, 2022), d(3, 1))),
        ("four years ago", (d(1, 1, 2019), d(1, 1, 2020))),
        # The calendar week before the one said in (Monday to Sunday).
        ("last week", (d(4, 10), d(4, 17))),
        ("next week", (d(4, 24), d(5, 1))),
        ("last weekend", (d(4, 15), d(4, 17))),
        ("next weekend", (d(4, 22), d(4, 24))),
        ("last month", (d(3, 1), d(4, 1))),
        ("next month", (d(5, 1), d(6, 1))),
        ("last year", (d(1, 1, 2022), d(1, 1))),
        ("next year", (d(1, 1, 2024), d(1, 1, 2025))),
        ("Last Fri I took the kids", (d(4, 14), d(4, 15))),
        ("last Tuesday", (d(4, 11), d(4, 12))),  # never the day it was said
        ("next tuesday", (d(4, 25), d(4, 26))),
        ("last Saturday", (d(4, 15), d(4, 16))),
        ("last June", (d(6, 1, 2022), d(7, 1, 2022))),
        ("last April", (d(4, 1, 2022), d(5, 1, 2022))),  # not the April it is
        ("last March", (d(3, 1), d(4, 1))),
        ("next April", (d(4, 1, 2024), d(5, 1, 2024))),
        ("next june", (d(6, 1), d(7, 1))),
        ("this past week", (d(4, 11), d(4, 18))),
        ("the other day", (d(4, 12), d(4, 18))),
    ],
)
def test_each_cue_tells_of_its_days(text: str, span: tuple[date, date]) -> None:
    assert told_spans(text, TUESDAY) == [span]


@pytest.mark.parametrize(
    ("said", "text", "span"),
    [
        (d(1, 10), "last month", (d(12, 1, 2022), d(1, 1))),
        (d(12, 10), "next month", (d(1, 1, 2024), d(2, 1, 2024))),
        (d(3, 31), "a month ago", (d(2, 1), d(3, 1))),
        (d(4, 23), "last weekend", (d(4, 22), d(4, 24))),  # said on a Sunday
        (d(4, 22), "last weekend", (d(4, 15), d(4, 17))),  # said on a Saturday
        (d(4, 22), "next weekend", (d(4, 29), d(5, 1))),
        (d(4, 17), "last week", (d(4, 10), d(4, 17))),  # said on a Monday
        (d(4, 23), "last week", (d(4, 10), d(4, 17))),  # said on a Sunday
    ],
)
def test_cues_count_from_the_day_said(said: date, text: str, span: tuple[date, date]) -> None:
    assert told_spans(text, said) == [span]


@pytest.mark.parametrize(
    "text",
    [
        "I last sat down with her in the spring",  # "sat" is the verb
        "we talked recently",
        "today we ship",
        "this week is busy",
        "in the past the pipeline was slow",
        "the last step failed",
        "daylight saving broke the cron job",
        "yesterdays",
        "",
    ],
)
def test_texts_fixing_no_day_tell_none(text: str) -> None:
    assert told_spans(text, TUESDAY) == []
    assert told_window(text, "2023-04-18T10:00:00.000000+00:00") is None


def test_a_turns_told_time_spans_all_its_cues() -> None:
    window = told_window(
        "Last year we used Celery; yesterday we moved to RQ.", "2023-04-18T22:30:00.000000+00:00"
    )
    assert window == ("2022-01-01T00:00:00.000000+00:00", "2023-04-18T00:00:00.000000+00:00")


def test_cues_are_read_in_the_first_characters_only() -> None:
    ends_at_the_limit = "x" * (TOLD_CHARS - 10) + " yesterday"
    assert len(ends_at_the_limit) == TOLD_CHARS
    assert told_spans(ends_at_the_limit, TUESDAY) == [(d(4, 17), d(4, 18))]
    assert told_spans("x" + ends_at_the_limit, TUESDAY) == []


@pytest.mark.parametrize("said_at", [None, "", "2025", "not a time"])
def test_no_day_said_means_no_told_time(said_at: str | None) -> None:
    assert told_window("yesterday we shipped it", said_at) is None


NOW = "2023-04-18T22:30:00.000000+00:00"  # a Tuesday


def test_a_questions_own_cues_name_windows_from_now() -> None:
    windows, rest = question_windows("What did we decide Yesterday about the queue?", NOW)
    # Yesterday, widened by a day on either side.
    assert windows == [("2023-04-16T00:00:00.000000+00:00", "2023-04-19T00:00:00.000000+00:00")]
    assert rest.split() == ["What", "did", "we", "decide", "about", "the", "queue?"]
    windows, _ = question_windows("what is planned for next week, and what broke last Friday?", NOW)
    assert windows == [
        ("2023-04-23T00:00:00.000000+00:00", "2023-05-02T00:00:00.000000+00:00"),
        ("2023-04-13T00:00:00.000000+00:00", "2023-04-16T00:00:00.000000+00:00"),
    ]


@pytest.mark.parametrize(
    "question",
    [
        "Where did Caroline move from 4 years ago?",  # about what a turn told, not about 2019
        "what did we ship last year?",
        "what did we ship three months ago?",
        "what did we ship next year?",
        "what did we ship recently?",
    ],
)
def test_a_cue_reaching_far_from_now_names_no_window(question: str) -> None:
    assert question_windows(question, NOW) == ([], question)


def test_a_cue_within_reach_names_its_window() -> None:
    windows, _ = question_windows("what did we ship two months ago?", NOW)
    assert windows == [("2023-01-31T00:00:00.000000+00:00", "2023-03-02T00:00:00.000000+00:00")]


def test_blanking_a_cue_keeps_the_rest_of_the_question_in_place() -> None:
    # "İ" lowercases to two characters: positions come from the question itself.
    windows, rest = question_windows("İstanbul deploy yesterday: what failed?", NOW)
    assert len(windows) == 1 and rest == "İstanbul deploy          : what failed?"


@pytest.mark.parametrize(
    ("question", "now", "kept"),
    [
        # The last day of "N days ago" is N days back: within reach up to
        # QUESTION_REACH_DAYS + 1 (its end is then exactly the reach back).
        (f"what broke {QUESTION_REACH_DAYS + 1} days ago?", NOW, True),
        (f"what broke {QUESTION_REACH_DAYS + 2} days ago?", NOW, False),
        # "next year" starts on 1 January: 62 days after 31 October.
        ("what is planned for next year?", "2023-10-31T12:00:00.000000+00:00", True),
        ("what is planned for next year?", "2023-10-30T12:00:00.000000+00:00", False),
    ],
)
def test_the_reach_of_a_questions_cue_ends_where_it_says(
    question: str, now: str, kept: bool
) -> None:
    assert QUESTION_REACH_DAYS == 62
    assert bool(question_windows(question, now)[0]) is kept
