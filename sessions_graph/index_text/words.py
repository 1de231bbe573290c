"""Words for recall: how text is cut for the turn index and how a question is
cut into search terms, the same way on both engines.

Free text is never query syntax here: a question is cut into words (quotes,
colons and operators are just separators), so nothing a user types can be a
syntax error. Three rules make the index and the question agree:

* **Words** are runs of letters and digits, lowercased (the engines'
  tokenizers split the same way; the embedded engine also stems them).
* **CJK** (Chinese, Japanese kana and kanji, Korean) has no spaces between
  words, so a tokenizer that splits on non-letters sees a whole sentence as
  one token and nothing inside it can be found. ``index_text`` puts a space
  between CJK characters, so each is a token; a CJK run in a question
  becomes its overlapping two-character phrases (``东京寿司`` -> ``东京``,
  ``京寿``, ``寿司``), the usual bigram retrieval for unsegmented scripts:
  any shared word scores, without a dictionary.
* **Long tokens** (Tantivy drops tokens of 40 UTF-8 bytes or more, and
  hashes, base64 and long identifiers are exactly what a developer pastes)
  are cut into pieces of at most 39 bytes in the index and searched as a
  phrase of pieces. Measured in bytes, not characters: 20 Cyrillic letters
  are 40 bytes. (The embedded engine's migration 12 rewrote the documents
  cut into 40-character pieces before.)

Kept free of anything heavier than ``re``: engines call ``index_text`` on the
hook's write path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from sessions_graph.query import MAX_TOKEN_BYTES, is_cjk, split_cjk

#: Most characters of a token that cannot be over ``MAX_TOKEN_BYTES`` (a
#: character is at most 4 bytes): a text without a longer run needs no cut.
_SAFE_CHARS = MAX_TOKEN_BYTES // 4
_WORD = re.compile(r"[^\W_]+")
#: Function words of English questions and answers: they match nearly every
#: turn, so as OR terms they only add noise to the ranking. A question made
#: of nothing else keeps them.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just let me might more most must my
    myself no nor not now of off on once only or other our ours ourselves out over own
    same shall she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up upon us very was we were
    what when where which while who whom whose why will with would you your yours
    yourself yourselves s t d ll m re ve don didn doesn isn wasn weren won
    """.split()
)
#: Words that frame a question rather than name what it is about ("what
#: would she *likely* ...", "what did he *say* about ..."): the turn that
#: answers rarely repeats them. Left out of questions only, never of the
#: index or of other word lists.
QUESTION_WORDS = frozenset(
    """
    likely kind type think say said says mention mentioned tell told talk talked
    describe considered consider ever
    """.split()
)

#: Words left out of a question's terms, and so out of its compounds.
_LEFT_OUT = STOP_WORDS | QUESTION_WORDS


def index_text(text: str) -> str:
    """``text`` as the turn index stores it: CJK characters spaced apart and
    tokens over ``MAX_TOKEN_BYTES`` cut into pieces; everything else unchanged."""
    # Cheap tests first: this runs on every action a hook stores, and almost
    # no text has CJK or a long run of letters without a space.
    ascii_only = text.isascii()
    if not ascii_only:
        text = "".join(f" {c} " if is_cjk(c) else c for c in text)
    longest = MAX_TOKEN_BYTES if ascii_only else _SAFE_CHARS
    if len(text) > longest and max(map(len, text.split()), default=0) > longest:
        text = _WORD.sub(lambda m: " ".join(_pieces(m.group())), text)
    return text


def has_long_word(text: str) -> bool:
    """Whether ``text`` holds a word over ``MAX_TOKEN_BYTES`` (one that
    ``index_text`` cuts)."""
    return any(len(_pieces(m.group())) > 1 for m in _WORD.finditer(text))


def _pieces(token: str) -> list[str]:
    """``token`` cut into pieces of at most ``MAX_TOKEN_BYTES`` UTF-8 bytes,
    at character boundaries (``[token]`` when it is short enough)."""
    if len(token) <= _SAFE_CHARS or (token.isascii() and len(token) <= MAX_TOKEN_BYTES):
        return [token]
    pieces, start, size = [], 0, 0
    for i, char in enumerate(token):
        width = len(char.encode("utf-8", "surrogatepass"))
        if size + width > MAX_TOKEN_BYTES:
            pieces.append(token[start:i])
            start, size = i, 0
        size += width
    pieces.append(token[start:])
    return pieces


def _raw_terms(said: list[str]) -> Iterator[tuple[str, ...]]:
    """Every word of a text (``said``, its ``words``) as a term (a tuple of
    index tokens): a plain word is one token, a long one its pieces, a CJK
    run its bigrams."""
    for word in said:
        if word.isascii():
            yield from _plain(word)
            continue
        chars: list[str] = []  # the CJK run being read
        for part in [*split_cjk(word), ""]:
            if part and is_cjk(part):
                chars.append(part)
                continue
            if len(chars) == 1:
                yield (chars[0],)
            for i in range(len(chars) - 1):
                yield (chars[i], chars[i + 1])
            chars = []
            if part:
                yield from _plain(part)


def _plain(word: str) -> Iterator[tuple[str, ...]]:
    yield tuple(_pieces(word))


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The distinct search terms of a question, in order, stop words and
    question words left out (unless nothing else is left), then the other
    forms of its irregular words ("went" and "gone" for "go"; see
    ``forms``) and of its compounds ("road trip" for "roadtrip" and the
    other way round; see ``compounds``). Each term is a tuple of index
    tokens, to be matched as a phrase."""
    said = words(text)  # cut once: for the terms and for the compounds
    terms = list(dict.fromkeys(_raw_terms(said)))
    content = [t for t in terms if len(t) > 1 or t[0] not in _LEFT_OUT]
    if not content:
        return terms
    # Imported here: building the table is 0.5 ms that a hook which only
    # stores actions (and so imports this module) never needs.
    from sessions_graph.index_text.compounds import compound_forms
    from sessions_graph.index_text.forms import OTHER_FORMS

    forms = [(f,) for t in content if len(t) == 1 for f in OTHER_FORMS.get(t[0], ())]
    compounds = compound_forms(said, _LEFT_OUT)
    return list(dict.fromkeys(content + forms + compounds))


def is_pieces(term: Sequence[str]) -> bool:
    """Whether a search term is one long word cut into pieces (not a phrase
    of words or of CJK characters)."""
    return len(term) > 1 and len("".join(term).encode("utf-8", "surrogatepass")) > MAX_TOKEN_BYTES


def written(term: Sequence[str]) -> str:
    """A search term as a text writes it: a long word's pieces and a CJK
    bigram's characters joined back, a compound's halves with a space."""
    return "".join(term) if is_pieces(term) or is_cjk(term[0][0]) else " ".join(term)


def words(text: str) -> list[str]:
    """The words of ``text`` as written (lowercased, CJK runs whole), in order."""
    return [m.group().lower() for m in _WORD.finditer(text)]
