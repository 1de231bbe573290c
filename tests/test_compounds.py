"""Compound forms: a question's closed words are also searched as their
halves, and its adjacent words joined (``index_text.compounds``)."""

from __future__ import annotations

import pytest

from sessions_graph.index_text.compounds import MAX_CUT, MAX_FORMS, compound_forms
from sessions_graph.index_text.words import STOP_WORDS, query_terms, words


def forms(text: str) -> list[tuple[str, ...]]:
    return compound_forms(words(text), STOP_WORDS)


def test_a_closed_word_is_cut_where_both_halves_have_four_letters() -> None:
    assert forms("smartwatch") == [("smar", "twatch"), ("smart", "watch"), ("smartw", "atch")]
    assert forms("database") == [("data", "base")]
    assert forms("codebase") == [("code", "base")]


@pytest.mark.parametrize(
    ("word", "halves"),
    [
        ("setup", ("set", "up")),
        ("checkups", ("check", "ups")),
        ("workout", ("work", "out")),
        ("takeoff", ("take", "off")),
        ("breakdown", ("break", "down")),
        ("makeover", ("make", "over")),
    ],
)
def test_a_word_ending_in_a_particle_is_cut_before_it(word: str, halves: tuple[str, str]) -> None:
    assert halves in forms(word)


@pytest.mark.parametrize(
    "word",
    [
        "melanie",  # "mel" + "anie": stemmed, a common word's phrase ("Mel! Any news?")
        "lesson",  # "less on": "on" ends too many words to be a particle
        "protein",  # "prote in": nor "in"
        "goup",  # a particle after two letters
        "books",  # "boo" + "ks": a plural, but not of a particle
        "sha256sum",  # digits: an identifier
        "größenordnung",  # not ASCII
        "a" * (MAX_CUT - 3) + "down",  # over MAX_CUT letters
    ],
)
def test_words_that_are_no_compounds_are_not_cut(word: str) -> None:
    assert forms(word) == []


def test_the_longest_word_cut_is_max_cut_letters() -> None:
    assert forms("a" * (MAX_CUT - 3) + "down") == []
    assert ("a" * (MAX_CUT - 4), "down") in forms("a" * (MAX_CUT - 4) + "down")


def test_stop_words_are_neither_cut_nor_joined_first() -> None:
    assert forms("yourselves") == []
    # "for getting" would be "forgetting", "a part" "apart", "Sam's team" "steam".
    assert forms("for getting started") == [("gettingstarted",)]
    assert forms("a part of it") == []
    assert forms("sam's team") == []


def test_adjacent_words_are_joined() -> None:
    assert forms("road trip") == [("roadtrip",)]
    assert forms("code base") == [("codebase",)]


def test_a_particle_is_joined_to_the_word_before_it_only_if_it_has_three_letters() -> None:
    assert forms("set up the box") == [("setup",)]
    assert forms("check out") == [("checkout",)]
    assert forms("go out") == []
    # Not "in" or "on": "spend less on" is no "lesson".
    assert forms("log in") == []
    assert forms("less on") == []


def test_a_joined_word_is_at_most_max_cut_letters() -> None:
    assert ("a" * 10 + "b" * 10,) in forms("a" * 10 + " " + "b" * 10)
    assert [f for f in forms("a" * 10 + " " + "b" * 11) if len(f) == 1] == []


def test_only_letters_are_joined() -> None:
    assert forms("python 3") == []
    assert forms("東京 tower") == []


def test_query_terms_end_with_the_compound_forms() -> None:
    assert query_terms("Where did we go on the road trip?") == [
        ("go",),
        ("road",),
        ("trip",),
        ("goes",),
        ("went",),
        ("gone",),
        ("roadtrip",),
    ]
    assert query_terms("the smartwatch") == [
        ("smartwatch",),
        ("smar", "twatch"),
        ("smart", "watch"),
        ("smartw", "atch"),
    ]
    assert query_terms("what is it") == [("what",), ("is",), ("it",)]  # stop words only: as before


def test_a_long_question_has_at_most_max_forms_the_first_words_first() -> None:
    """A pasted log must not cost hundreds of look-ups: each word's forms,
    in the question's order, distinct, up to ``MAX_FORMS``."""
    many = " ".join(f"{w}base" for w in ("code", "data", "fire", "snow", "rain") * 4)
    assert forms(many)[:2] == [("code", "base"), ("codebasedatabase",)]
    assert len(forms("roadtrip roadtrip")) == len(forms("roadtrip")) + 1  # + "roadtriproadtrip"
    long = " ".join(chr(97 + i) * 3 + "smartwatch" for i in range(20))
    assert len(forms(long)) == MAX_FORMS
    assert forms(long)[0] == ("aaas", "martwatch") and ("ttts", "martwatch") not in forms(long)
