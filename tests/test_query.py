"""The search query language: parsing, rendering for each engine, evaluation.

Engine behaviour with real indexes is the contract suite's job; these tests
pin the language itself, which both engines share.
"""

from __future__ import annotations

import pytest

from sessions_graph.errors import InvalidQueryError
from sessions_graph.query import (
    MAX_QUERY_CHARS,
    And,
    Or,
    Term,
    has_prefix,
    matches,
    parse,
    term_hits,
    to_fts5,
    to_tantivy,
    tokenize,
)


# -- parsing ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("Python", Term(("python",))),
        ('"exact  Phrase"', Term(("exact", "phrase"))),
        ("pyth*", Term(("pyth",), prefix=True)),
        ('"big bad wo"*', Term(("big", "bad", "wo"), prefix=True)),
        ("a b", Or((Term(("a",)), Term(("b",))))),
        ("a AND b OR c", Or((And((Term(("a",)), Term(("b",)))), Term(("c",))))),
        ("a NOT b", And((Term(("a",)),), (Term(("b",)),))),
        ("a AND NOT b", And((Term(("a",)),), (Term(("b",)),))),
        ("(a)", Term(("a",))),
        ("C++ !!! rules", Or((Term(("c",)), Term(("rules",))))),
    ],
)
def test_parse_builds_the_tree(query: str, tree: object) -> None:
    assert parse(query) == tree


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("content:python", "unsupported query syntax"),
        ("python^2", "unsupported query syntax"),
        ("pyth~1", "unsupported query syntax"),
        ("[a TO b]", "unsupported query syntax"),
        ("+python", "unsupported operator"),
        ("-python", "unsupported operator"),
        ("py*thon", "only supported at the end"),
        ("python**", "only supported at the end"),
        ('"unclosed', "unbalanced quote"),
        ("(python", "unbalanced parenthesis"),
        ("python)", "unbalanced parenthesis"),
        ("NOT python", "cannot start with NOT"),
        ("python AND", "need a term after them"),
        ("python AND NOT", "need a term after them"),
        ("OR python", "needs a term on both sides"),
        ("python OR", "needs a term on both sides"),
        ("a OR AND b", "needs a term on both sides"),
        ("!!! NOT python", "at least one positive term"),
        ("", "empty"),
        ("   ", "empty"),
        ("!!!", "no searchable words"),
        ("x" * (MAX_QUERY_CHARS + 1), "longer than"),
    ],
)
def test_parse_errors_say_what_is_wrong(query: str, message: str) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        parse(query)


def test_only_strings_are_queries() -> None:
    with pytest.raises(InvalidQueryError, match="must be a string"):
        parse(["python"])


def test_tokens_are_letters_and_digits_lowercased_and_not_too_long() -> None:
    assert tokenize("Rules2024 were_updated: C++!") == ["rules2024", "were", "updated", "c"]
    assert tokenize("a" * 41 + " b") == ["a" * 41, "b"]  # long tokens are kept
    assert tokenize("我喜欢Tokyo東京") == ["我", "喜", "欢", "tokyo", "東", "京"]


# -- rendering for SQLite FTS5 -------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("python", '"python"'),
        ('"exact Phrase"', '"exact phrase"'),
        ("pyth*", '"pyth" *'),
        ('"big bad wo"*', '"big bad wo" *'),
        ("a b", '("a" OR "b")'),
        ("a OR b", '("a" OR "b")'),
        ("a AND b", '(("a" AND "b"))'),
        ("a NOT b", '(("a") NOT ("b"))'),
        ("a AND NOT b", '(("a") NOT ("b"))'),
        ("a NOT b NOT c", '(("a") NOT ("b" OR "c"))'),
        ("(a OR b) AND c", '((("a" OR "b") AND "c"))'),
        ("C++ rules", '("c" OR "rules")'),
    ],
)
def test_fts5_rendering(query: str, expected: str) -> None:
    assert to_fts5(parse(query)) == expected


# -- rendering for Tantivy (Memgraph) --------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("python", "data.content:python"),
        ('"exact Phrase"', 'data.content:"exact phrase"'),
        ("a b", "(data.content:a OR data.content:b)"),
        ("a OR b", "(data.content:a OR data.content:b)"),
        ("a AND b", "(+data.content:a +data.content:b)"),
        ("a NOT b", "(+data.content:a -data.content:b)"),
        ("a AND NOT b", "(+data.content:a -data.content:b)"),
        ("(a OR b) AND c", "(+(data.content:a OR data.content:b) +data.content:c)"),
        ("C++ rules", "(data.content:c OR data.content:rules)"),
    ],
)
def test_tantivy_rendering(query: str, expected: str) -> None:
    assert to_tantivy(parse(query), "data.content") == expected


def test_prefix_queries_stay_out_of_tantivy() -> None:
    assert has_prefix(parse("a AND (b OR pyth*)"))
    assert has_prefix(parse("a NOT pyth*"))
    assert not has_prefix(parse("a AND (b OR python)"))
    with pytest.raises(ValueError):
        to_tantivy(parse("a AND pyth*"), "data.content")


# -- evaluation --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "text", "expected"),
    [
        ("python", "I like Python.", True),
        ("python", "pythonic code", False),
        ("rules", "Rules2024 were updated", False),
        ("pyth*", "pythonic code", True),
        ("pyth*", "a typhoon", False),
        ('"big bad wo"*', "the big bad wolf", True),
        ('"big bad wo"*', "the big wolf", False),
        ('"big bad"', "bad big", False),
        ('"big bad"', "a big, bad day", True),
        ("a b", "b only", True),
        ("a AND b", "b only", False),
        ("a NOT b", "a c", True),
        ("a NOT b", "a b", False),
        ("a NOT b NOT c", "a c", False),
        ("(x OR y) AND z", "y z", True),
        ("(x OR y) AND z", "x", False),
    ],
)
def test_matches(query: str, text: str, expected: bool) -> None:
    assert matches(parse(query), tokenize(text)) is expected


def test_term_hits_counts_every_occurrence() -> None:
    tokens = tokenize("big bad wolf, big bad world, big day")
    assert term_hits(Term(("big",)), tokens) == 3
    assert term_hits(Term(("big", "bad")), tokens) == 2
    assert term_hits(Term(("big", "bad", "wo"), prefix=True), tokens) == 2
    assert (
        term_hits(Term(("big", "bad", "wolf", "big", "bad", "world", "big", "day", "x")), tokens)
        == 0
    )


def test_deep_nesting_is_a_query_error_not_a_crash() -> None:
    from sessions_graph.query import MAX_DEPTH

    assert parse("(" * MAX_DEPTH + "python" + ")" * MAX_DEPTH) == Term(("python",))
    for depth in (MAX_DEPTH + 1, 330):
        with pytest.raises(InvalidQueryError, match="nest deeper"):
            parse("(" * depth + "python" + ")" * depth)
