"""The search query language: parsing, rendering for each engine, evaluation.

Engine behaviour with real indexes is the contract suite's job; these tests
pin the language itself, which both engines share.
"""

from __future__ import annotations

import pytest

from sessions_graph.errors import InvalidQueryError
from sessions_graph.index_text.words import index_text
from sessions_graph.query import (
    And,
    Or,
    Term,
    has_prefix,
    local_score,
    matches,
    needs_local,
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
        ("x" * 1001, "longer than"),
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


#: Each script written without spaces (the blocks named in ``query.py``), by
#: the characters on either side of its boundaries: (code point, whether it
#: is a token of its own). A neighbour outside that is a letter (Georgian,
#: Ethiopic, Yi, a Latin ligature, a halfwidth Hangul filler) joins the word
#: it stands in; the others (symbols, unassigned code points, a lone
#: surrogate) are no letters, which only the turn index shows: it spaces every
#: CJK code point apart, and SQLite's tokenizer reads an unassigned one as part
#: of a word.
CJK_BOUNDARIES = [
    (0x10FF, False),  # Georgian letter, before Hangul Jamo
    (0x1100, True),  # Hangul Jamo, first and last
    (0x11FF, True),
    (0x1200, False),  # Ethiopic syllable, after
    (0x303F, False),  # ideographic half fill space, before the kana
    (0x3040, True),  # Hiragana and Katakana, first (unassigned) and last
    (0x30FF, True),
    (0x3100, True),  # Bopomofo, first (unassigned, right after Katakana) and last
    (0x31BF, True),
    (0x31C0, False),  # CJK stroke, after
    (0x31EF, False),  # before the Katakana Phonetic Extensions
    (0x31F0, True),
    (0x31FF, True),
    (0x3200, False),  # enclosed CJK letters, after
    (0x33FF, False),  # CJK compatibility square, before Extension A
    (0x3400, True),
    (0x4DBF, True),
    (0x4DC0, False),  # hexagram, after
    (0x4DFF, False),  # hexagram, before the Unified Ideographs
    (0x4E00, True),
    (0x9FFF, True),
    (0xA000, False),  # Yi syllable, after
    (0xA95F, False),  # Rejang section mark, before Hangul Jamo Extended-A
    (0xA960, True),
    (0xA97F, True),
    (0xA980, False),  # Javanese sign, after
    (0xABFF, False),  # before the Hangul Syllables (and Jamo Extended-B)
    (0xAC00, True),
    (0xD7FF, True),
    (0xD800, False),  # a lone surrogate, after
    (0xF8FF, False),  # private use, before the Compatibility Ideographs
    (0xF900, True),
    (0xFAFF, True),
    (0xFB00, False),  # Latin ligature ff, after
    (0xFF65, False),  # halfwidth middle dot, before halfwidth Katakana
    (0xFF66, True),
    (0xFF9F, True),
    (0xFFA0, False),  # halfwidth Hangul filler, after
    (0x1FFFF, False),  # before Extension B
    (0x20000, True),  # Extension B to the Compatibility Supplement
    (0x2FA1F, True),
    (0x2FA20, False),
]


@pytest.mark.parametrize(
    ("code", "cjk"), CJK_BOUNDARIES, ids=[f"U+{c:04X}" for c, _ in CJK_BOUNDARIES]
)
def test_cjk_blocks_end_where_they_are_documented(code: int, cjk: bool) -> None:
    char = chr(code)
    assert index_text(f"x{char}y") == (f"x {char} y" if cjk else f"x{char}y")
    if char.isalnum():
        assert tokenize(f"x{char}y") == (["x", char, "y"] if cjk else [f"x{char}y"])


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


# -- limits: exactly at each one accepted, one over refused ---------------------------------------
def test_a_query_of_1000_characters_is_accepted_and_one_more_refused() -> None:
    words = "python " * 142 + "x" * 6  # 1,000 characters
    assert parse(words) == Or((Term(("python",)),) * 142 + (Term(("xxxxxx",)),))
    with pytest.raises(InvalidQueryError, match="longer than 1000 characters"):
        parse(words + "x")


def test_parentheses_nest_32_deep_and_no_deeper() -> None:
    """The depth counts open groups, not every group seen: groups side by
    side (closed again) leave the limit where it was."""
    assert parse("(" * 32 + "python" + ")" * 32) == Term(("python",))
    siblings = "(a) (b) "
    assert parse(siblings + "(" * 32 + "python" + ")" * 32) == Or(
        (Term(("a",)), Term(("b",)), Term(("python",)))
    )
    for query in ("(" * 33 + "python" + ")" * 33, siblings + "(" * 33 + "python" + ")" * 33):
        with pytest.raises(InvalidQueryError, match="nest deeper than 32 levels"):
            parse(query)


# -- a quoted operator or bracket is text, not syntax ----------------------------------------------
@pytest.mark.parametrize(
    ("query", "tree"),
    [
        # Quoted, an operator is a word to find, and a bracket is no word at all.
        ('python AND "OR"', And((Term(("python",)), Term(("or",))))),
        ('python ")"', Term(("python",))),
        ('python ""', Term(("python",))),
        ('python OR ")"', Term(("python",))),
        ('python AND ")"', Term(("python",))),
        ('("big bad wo"*)', Term(("big", "bad", "wo"), prefix=True)),
    ],
)
def test_quoted_syntax_is_searched_as_text(query: str, tree: object) -> None:
    assert parse(query) == tree


def test_an_operator_after_and_is_refused_as_a_missing_term() -> None:
    with pytest.raises(InvalidQueryError, match="need a term after them"):
        parse("python AND OR java")


# -- what Memgraph's index cannot answer: evaluated over the user's texts -------------------------
@pytest.mark.parametrize(
    ("query", "local"),
    [
        ("a" * 39, False),  # Tantivy keeps a token of 39 bytes
        ("a" * 40, True),  # and drops one of 40
        ("ж" * 19, False),  # 38 bytes
        ("ж" * 20, True),  # 40 bytes: counted in bytes, not characters
        ("东京", True),  # CJK, indexed by Tantivy as one run
        ("tokyo", False),
        ("python NOT " + "a" * 40, True),  # an excluded term counts too
        ("python NOT 东京", True),
        ("python NOT java", False),
    ],
)
def test_queries_the_index_cannot_answer_are_evaluated_locally(query: str, local: bool) -> None:
    assert needs_local(parse(query)) is local


def test_local_score_counts_hits_damped_by_length() -> None:
    """A text that is nothing but the word outranks one that says more."""
    query = parse("python")
    alone = local_score(query, tokenize("Python"))
    assert alone > local_score(query, tokenize("python code")) > 0
    assert local_score(query, tokenize("python python")) > alone
    assert local_score(query, []) == 0
