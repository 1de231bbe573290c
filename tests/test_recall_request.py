"""The rules on a recall call (``recall.request.check_request``), which the
façade, the CLI, the hooks and the MCP server share: each documented limit
is taken at its edge and refused one past it, with the package's own error,
and the scope words choose which sessions' turns are searched."""

from __future__ import annotations

from typing import Any

import pytest

from sessions_graph import InvalidQueryError, MemoryValidationError
from sessions_graph.recall.request import check_request


def test_a_question_of_1000_characters_is_taken_and_one_more_is_refused() -> None:
    question = "word " * 199 + "words"
    assert len(question) == 1000
    assert check_request("alice", question).query == question
    with pytest.raises(InvalidQueryError, match="longer than 1000 characters"):
        check_request("alice", question + "s")


@pytest.mark.parametrize("query", ["", " \t\n ", None, 7, ["cache"]])
def test_a_question_that_is_empty_or_not_text_is_refused(query: object) -> None:
    with pytest.raises(InvalidQueryError):
        check_request("alice", query)


def test_a_question_of_no_searchable_words_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="no searchable words"):
        check_request("alice", "?! ... ::")


@pytest.mark.parametrize("limit", [1, 2, 99, 100])
def test_a_limit_from_1_to_100_is_taken(limit: int) -> None:
    assert check_request("alice", "cache", limit=limit).limit == limit


@pytest.mark.parametrize("limit", [0, -1, 101, True, False, 5.0, "10", None])
def test_a_limit_outside_1_to_100_or_not_an_integer_is_refused(limit: object) -> None:
    with pytest.raises(MemoryValidationError, match="integer from 1 to 100"):
        check_request("alice", "cache", limit=limit)


def test_a_project_of_1_to_4096_characters_is_taken() -> None:
    for project in ("p", "/" + "d" * 4095):
        assert check_request("alice", "cache", project=project).project == project
    assert check_request("alice", "cache").project is None


@pytest.mark.parametrize("project", ["", "/" + "d" * 4096, 42, ["/src"]])
def test_a_project_that_is_empty_too_long_or_not_text_is_refused(project: object) -> None:
    with pytest.raises(MemoryValidationError, match="1-4096 characters"):
        check_request("alice", "cache", project=project)


def test_a_project_path_names_the_same_directory_with_or_without_its_slash() -> None:
    def project(value: str) -> str | None:
        return check_request("alice", "cache", project=value).project

    assert project("/src/app/") == "/src/app" and project("/src/app") == "/src/app"
    assert project("/") == "/" and project("///") == "/"


def test_a_window_of_one_instant_is_taken_and_a_reversed_one_refused() -> None:
    same = check_request("alice", "cache", since="2026-01-01T10:00:00Z", until="2026-01-01T10:00Z")
    assert same.since == same.until == "2026-01-01T10:00:00.000000+00:00"
    with pytest.raises(MemoryValidationError, match="since is later than until"):
        check_request("alice", "cache", since="2026-01-01T10:00:01Z", until="2026-01-01T10:00Z")
    # One bound alone is never out of order.
    assert check_request("alice", "cache", since="2026-01-01").until is None
    assert check_request("alice", "cache", until="2026-01-01").since is None


@pytest.mark.parametrize("value", ["yesterday", 12, 1.5, ["2026-01-01"]])
def test_a_time_bound_that_is_no_date_is_refused(value: object) -> None:
    for field in ("since", "until"):
        with pytest.raises(MemoryValidationError, match=field):
            check_request("alice", "cache", **{field: value})


def _scope(**kwargs: Any) -> set[str]:
    return set(check_request("alice", "cache", **kwargs).scope)


def test_scope_words_and_lists_name_the_kinds_searched() -> None:
    everything = {"turns", "memories", "entities"}
    assert _scope() == everything
    assert _scope(scope="all") == _scope(scope="auto") == everything
    assert _scope(scope="turns, memories") == {"turns", "memories"}
    assert _scope(scope=["memories"]) == _scope(scope=("memories",)) == {"memories"}
    assert _scope(scope={"entities", "turns"}) == {"entities", "turns"}
    assert _scope(scope=frozenset({"turns"})) == {"turns"}
    assert _scope(scope=["all"]) == everything
    assert _scope(scope=["all", "session"], session_id="s-1") == everything | {"session"}


@pytest.mark.parametrize("scope", ["everything", "", [], (), ["turns", "nope"], 3, None])
def test_an_unknown_or_empty_scope_is_refused(scope: object) -> None:
    with pytest.raises(MemoryValidationError, match="scope"):
        check_request("alice", "cache", scope=scope)


def test_auto_adds_the_asking_sessions_interactions_only_when_there_is_one() -> None:
    assert "interactions" in _scope(scope="auto", session_id="s-1")
    assert "interactions" not in _scope(scope="auto")
    # "all" is long-term only, session or not.
    assert "interactions" not in _scope(scope="all", session_id="s-1")


@pytest.mark.parametrize("needs", ["session", "interactions"])
def test_a_scope_about_the_asking_session_needs_its_id(needs: str) -> None:
    with pytest.raises(MemoryValidationError, match=f"scope '{needs}' needs the asking session"):
        check_request("alice", "cache", scope=[needs, "turns"])
    assert needs in _scope(scope=needs, session_id="s-1")


def test_the_asking_sessions_own_turns_are_left_out_unless_the_scope_names_them() -> None:
    def filters(scope: object) -> tuple[str | None, str | None]:
        found = check_request("alice", "cache", session_id="s-1", scope=scope).turn_filters()
        return found["exclude_session"], found["only_session"]

    assert filters("all") == ("s-1", None)  # every session but the asking one
    assert filters("session") == (None, "s-1")  # the asking one alone
    assert filters(["turns", "session"]) == (None, None)  # all of them
    without = check_request("alice", "cache").turn_filters()
    assert (without["exclude_session"], without["only_session"]) == (None, None)


def test_a_window_named_in_the_question_narrows_the_callers_own() -> None:
    req = check_request("alice", "cache", since="2026-01-01", until="2026-12-31")
    assert req.turn_filters()["since"] == "2026-01-01T00:00:00.000000+00:00"
    inner = req.turn_filters(since="2026-03-01T00:00:00.000000+00:00", until="2027-01-05")
    assert inner["since"] == "2026-03-01T00:00:00.000000+00:00"
    assert inner["until"] == "2026-12-31T00:00:00.000000+00:00"


def test_the_date_words_of_a_question_are_not_searched_as_words() -> None:
    """A named date is a window, not three more words: "13" and "2023"
    would match any turn that mentions a 13 or a 2023."""
    req = check_request("alice", "what painting was shown on October 13, 2023?")
    assert req.windows and ("painting",) in req.undated_terms
    assert not {("october",), ("13",), ("2023",)} & set(req.undated_terms)
    bare = check_request("alice", "what did we paint in October?")
    assert bare.months == (10,) and ("october",) not in bare.undated_terms
    # No date named: no separate terms (the question's own are searched).
    assert check_request("alice", "what painting").undated_terms == ()


def test_a_questions_own_cue_counts_from_today_unless_it_names_a_date() -> None:
    from datetime import datetime, timedelta, timezone

    today = datetime.now(timezone.utc).date()
    req = check_request("alice", "what did we decide about the queue yesterday?")
    assert len(req.windows) == 1
    start, end = (datetime.fromisoformat(w).date() for w in req.windows[0])
    # Yesterday, and a day either side of it (the asker's day is not UTC's).
    assert (start, end) == (today - timedelta(days=2), today + timedelta(days=1))
    assert ("yesterday",) not in req.undated_terms and ("queue",) in req.undated_terms
    # A question naming a date: its cue counts from that date, so it names
    # no window from today.
    named = check_request("alice", "what broke yesterday, as said on October 13, 2023?")
    assert named.windows == (
        ("2023-10-12T00:00:00.000000+00:00", "2023-10-17T00:00:00.000000+00:00"),
    )
