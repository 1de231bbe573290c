"""The search query language: a checked subset of Tantivy's query syntax.

Both engines search with the same language, and all of it lives here: a
query is parsed once into a small tree (``parse``), then rendered for the
engine (``to_fts5`` for SQLite, ``to_tantivy`` for Memgraph) or evaluated
against a text's tokens (``matches``), which is how Memgraph re-checks its
hits and answers prefix queries. User text never reaches either engine's
parser as syntax: every term is re-emitted from its tokens, which are
letters and digits only.

Accepted forms::

    python                 a word (any words side by side: either may match)
    "exact phrase"         a phrase
    pyth*                  a prefix (on the last token of a word)
    a AND b, a OR b        boolean operators (AND binds tighter than OR)
    a NOT b, a AND NOT b   exclusion (needs at least one positive term)
    (a OR b) AND c         grouping

Rejected with ``InvalidQueryError``: field queries (``content:x``), boosts,
fuzzy, ranges, regexes, a leading ``+``/``-``, unbalanced quotes or brackets,
dangling operators, and queries with no positive term.
"""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import NamedTuple, Union

from sessions_graph.errors import InvalidQueryError

#: Longest query accepted, in characters.
MAX_QUERY_CHARS = 1000
#: The longest token Tantivy's default tokenizer keeps, in UTF-8 bytes: it
#: drops tokens of 40 bytes or more (a 20-letter Cyrillic word is 40 bytes),
#: at indexing and in queries. We keep them (hashes and long identifiers are
#: worth finding): the embedded index holds them whole, and on Memgraph a
#: query with one is evaluated locally.
MAX_TOKEN_BYTES = 39
#: Deepest nesting of parentheses; deeper would exhaust the recursive parser.
MAX_DEPTH = 32

_TOKEN = re.compile(r"[^\W_]+")  # runs of letters and digits, like the tokenizers
#: Scripts written without spaces between words (Hangul jamo, kana, CJK
#: ideographs with their extensions and compatibility forms, Hangul
#: syllables, halfwidth kana): each character is a token, so a word is a
#: phrase of characters. Code point ranges, not a regex class: compiling a
#: class this wide costs tens of milliseconds, and hooks import this module.
CJK_RANGES = (
    (0x1100, 0x11FF),
    (0x3040, 0x30FF),
    (0x3100, 0x31BF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x2FA1F),
)
_CJK_STARTS = [start for start, _ in CJK_RANGES]
_FORBIDDEN = set(":^~[]{}\\")
_OPERATORS = {"AND", "OR", "NOT"}


# Immutable records as NamedTuples, not frozen dataclasses: the embedded
# engine loads this module on every hook call, and ``dataclasses`` (with the
# ``inspect`` it imports) costs a hook process several milliseconds.
class Term(NamedTuple):
    """A word or phrase: one token is a term, several a phrase."""

    tokens: tuple[str, ...]
    prefix: bool = False


class And(NamedTuple):
    """All of ``must`` match and none of ``must_not``."""

    must: tuple["Node", ...]
    must_not: tuple["Node", ...] = ()


class Or(NamedTuple):
    """Any of ``should`` matches."""

    should: tuple["Node", ...]


Node = Union[Term, And, Or]  # noqa: UP007 - a runtime alias, kept 3.10-compatible


def tokenize(text: str) -> list[str]:
    """Split like the engines' tokenizers: letters and digits, lowercased;
    a CJK character is a token of its own (``东京`` -> ``东``, ``京``)."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group().lower()
        tokens += [token] if token.isascii() else split_cjk(token)
    return tokens


def is_cjk(token: str) -> bool:
    """Whether the (first) character of ``token`` is CJK."""
    code = ord(token[0])
    i = bisect_right(_CJK_STARTS, code) - 1
    return i >= 0 and code <= CJK_RANGES[i][1]


def split_cjk(word: str) -> list[str]:
    """A word cut into its CJK characters, one each, and the runs between them."""
    parts: list[str] = []
    run = ""
    for char in word:
        if is_cjk(char):
            if run:
                parts.append(run)
                run = ""
            parts.append(char)
        else:
            run += char
    if run:
        parts.append(run)
    return parts


def _lex(query: str) -> list[tuple[str, str]]:
    """Cut a query into (kind, text) lexemes: word, phrase, (, )."""
    lexemes: list[tuple[str, str]] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
        elif c in "()":
            lexemes.append((c, c))
            i += 1
        elif c == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise InvalidQueryError("unbalanced quote in query")
            lexemes.append(("phrase", query[i + 1 : end]))
            i = end + 1
            if i < n and query[i] == "*":
                lexemes[-1] = ("phrase*", lexemes[-1][1])
                i += 1
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"':
                j += 1
            lexemes.append(("word", query[i:j]))
            i = j
    return lexemes


def _term(kind: str, text: str) -> Term | None:
    if kind == "word":
        bad = sorted(set(text) & _FORBIDDEN)
        if bad:
            raise InvalidQueryError(
                f"unsupported query syntax {''.join(bad)!r} in {text!r}: field queries, boosts,"
                " fuzzy and range queries are not supported; quote the text to search for it"
            )
        if text[0] in "+-":
            raise InvalidQueryError(
                f"unsupported operator {text[0]!r} in {text!r}: use AND / NOT instead"
            )
        prefix = text.endswith("*")
        if "*" in text.rstrip("*") or text.endswith("**"):
            raise InvalidQueryError(f"'*' is only supported at the end of a word, in {text!r}")
    else:
        prefix = kind == "phrase*"
    tokens = tuple(tokenize(text))
    return Term(tokens, prefix) if tokens else None


class _Parser:
    def __init__(self, lexemes: list[tuple[str, str]]) -> None:
        self.lexemes = lexemes
        self.pos = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.lexemes[self.pos] if self.pos < len(self.lexemes) else None

    def is_op(self, op: str) -> bool:
        lex = self.peek()
        return lex is not None and lex[0] == "word" and lex[1] == op

    def take(self) -> tuple[str, str]:
        lex = self.lexemes[self.pos]
        self.pos += 1
        return lex

    def parse_or(self) -> Node | None:
        """or := and (["OR"] and)*  -- words side by side mean OR, as in Tantivy."""
        parts: list[Node] = []
        first = self.parse_and()
        if first is not None:
            parts.append(first)
        while (lex := self.peek()) is not None and lex[0] != ")":
            if self.is_op("OR"):
                self.take()
                if (
                    self.peek() is None
                    or self.peek()[0] == ")"
                    or self.is_op("OR")
                    or self.is_op("AND")
                ):
                    raise InvalidQueryError("OR needs a term on both sides")
            elif self.is_op("AND"):
                raise InvalidQueryError("AND needs a term on both sides")
            node = self.parse_and()
            if node is not None:
                parts.append(node)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def parse_and(self) -> Node | None:
        """and := unary (("AND" ["NOT"] | "NOT") unary)*"""
        if self.is_op("NOT"):
            raise InvalidQueryError("a query cannot start with NOT: exclude from a positive term")
        must: list[Node] = []
        must_not: list[Node] = []
        first = self.parse_unary()
        if first is not None:
            must.append(first)
        while self.is_op("AND") or self.is_op("NOT"):
            negate = self.take()[1] == "NOT"
            if not negate and self.is_op("NOT"):
                self.take()
                negate = True
            lex = self.peek()
            if lex is None or lex[0] == ")" or (lex[0] == "word" and lex[1] in _OPERATORS):
                raise InvalidQueryError("AND / NOT need a term after them")
            node = self.parse_unary()
            if node is not None:
                (must_not if negate else must).append(node)
        if not must:
            if must_not:
                raise InvalidQueryError("a query needs at least one positive term besides NOT")
            return None
        if len(must) == 1 and not must_not:
            return must[0]
        return And(tuple(must), tuple(must_not))

    def parse_unary(self) -> Node | None:
        if self.peek() is None:
            # Only an opening parenthesis leaves the parser wanting a term
            # at the end: ``cache (``, ``docker AND (``.
            raise InvalidQueryError("unbalanced parenthesis in query")
        kind, text = self.take()
        if kind == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise InvalidQueryError(f"parentheses nest deeper than {MAX_DEPTH} levels")
            node = self.parse_or()
            if self.peek() is None or self.peek()[0] != ")":
                raise InvalidQueryError("unbalanced parenthesis in query")
            self.take()
            self.depth -= 1
            return node
        if kind == ")":
            raise InvalidQueryError("unbalanced parenthesis in query")
        if kind == "word" and text in _OPERATORS:
            raise InvalidQueryError(f"{text} needs a term on both sides")
        return _term(kind, text)


def parse(query: object) -> Node:
    """Parse a search query, or raise ``InvalidQueryError`` saying what is wrong."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, not {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is longer than {MAX_QUERY_CHARS} characters")
    if not query.strip():
        raise InvalidQueryError("query is empty")
    parser = _Parser(_lex(query))
    node = parser.parse_or()
    if parser.peek() is not None:
        raise InvalidQueryError("unbalanced parenthesis in query")
    if node is None:
        raise InvalidQueryError(f"query {query!r} has no searchable words")
    return node


def to_fts5(node: Node) -> str:
    """Render for SQLite FTS5 MATCH (tokens are alphanumeric, so quoting is safe)."""
    if isinstance(node, Term):
        return f'"{" ".join(node.tokens)}"' + (" *" if node.prefix else "")
    if isinstance(node, Or):
        return "(" + " OR ".join(to_fts5(n) for n in node.should) + ")"
    expr = "(" + " AND ".join(to_fts5(n) for n in node.must) + ")"
    if node.must_not:
        expr += " NOT (" + " OR ".join(to_fts5(n) for n in node.must_not) + ")"
    return "(" + expr + ")"


def _terms(node: Node) -> list[Term]:
    if isinstance(node, Term):
        return [node]
    children = node.should if isinstance(node, Or) else node.must + node.must_not
    return [t for n in children for t in _terms(n)]


def needs_local(node: Node) -> bool:
    """Whether an index tokenizer cannot answer the query: a term holds CJK
    (indexed as one run, so a word inside it is no token) or a token longer
    than Tantivy keeps. Such a query is evaluated over the user's own texts
    with ``matches``."""
    return any(
        is_cjk(token) or len(token.encode("utf-8", "surrogatepass")) > MAX_TOKEN_BYTES
        for term in _terms(node)
        for token in term.tokens
    )


def substrings(node: Node) -> list[str]:
    """Pieces of text at least one of which occurs (case aside) in any text
    the query matches: one per positive term, its longest CJK run or token.
    A cheap filter before ``matches`` decides."""

    def positive(n: Node) -> list[Term]:
        if isinstance(n, Term):
            return [n]
        children = n.should if isinstance(n, Or) else n.must
        return [t for c in children for t in positive(c)]

    pieces = []
    for term in positive(node):
        runs, current = [], ""
        for token in term.tokens:
            if is_cjk(token):
                current += token
            else:
                runs += [current, token] if current else [token]
                current = ""
        runs.append(current)
        pieces.append(max(runs, key=len))
    return list(dict.fromkeys(p for p in pieces if p))


def local_score(node: Node, tokens: Sequence[str]) -> float:
    """A relevance score where no index scores: positive hits, damped by length."""

    def positive_hits(n: Node) -> int:
        if isinstance(n, Term):
            return term_hits(n, tokens)
        children = n.should if isinstance(n, Or) else n.must
        return sum(positive_hits(c) for c in children)

    return positive_hits(node) / math.sqrt(max(len(tokens), 1))


def has_prefix(node: Node) -> bool:
    """Whether any term of the query is a prefix (``word*``)."""
    if isinstance(node, Term):
        return node.prefix
    children = node.should if isinstance(node, Or) else node.must + node.must_not
    return any(has_prefix(n) for n in children)


def to_tantivy(node: Node, field: str) -> str:
    """Render a prefix-free query for Tantivy's QueryParser, every term scoped
    to ``field``.

    Occur prefixes (``+must``, ``-must_not``) and ``OR`` are used rather than
    ``AND`` / ``NOT`` keywords because every Tantivy version parses them the
    same way. Prefix terms are refused: Memgraph indexes properties as one
    JSON field, on which Tantivy's parser ignores the phrase-prefix ``*``
    (and it rejects it on one-word phrases), so they are evaluated with
    ``matches`` instead.
    """
    if isinstance(node, Term):
        if node.prefix:
            raise ValueError("prefix terms are evaluated outside Tantivy")
        if len(node.tokens) == 1:
            return f"{field}:{node.tokens[0]}"
        return f'{field}:"{" ".join(node.tokens)}"'
    if isinstance(node, Or):
        return "(" + " OR ".join(to_tantivy(n, field) for n in node.should) + ")"
    parts = ["+" + to_tantivy(n, field) for n in node.must]
    parts += ["-" + to_tantivy(n, field) for n in node.must_not]
    return "(" + " ".join(parts) + ")"


def term_hits(term: Term, tokens: Sequence[str]) -> int:
    """How many times the word / phrase (/ prefix) occurs in ``tokens``."""
    n = len(term.tokens)
    hits = 0
    for i in range(len(tokens) - n + 1):
        window = tokens[i : i + n]
        if term.prefix:
            ok = list(window[:-1]) == list(term.tokens[:-1]) and window[-1].startswith(
                term.tokens[-1]
            )
        else:
            ok = tuple(window) == term.tokens
        hits += ok
    return hits


def matches(node: Node, tokens: Sequence[str]) -> bool:
    """Evaluate the query against a text's tokens (from ``tokenize``), as FTS5
    and Tantivy would: whole tokens, phrases in sequence, prefixes on the
    last token of a term."""
    if isinstance(node, Term):
        return term_hits(node, tokens) > 0
    if isinstance(node, Or):
        return any(matches(n, tokens) for n in node.should)
    return all(matches(n, tokens) for n in node.must) and not any(
        matches(n, tokens) for n in node.must_not
    )
