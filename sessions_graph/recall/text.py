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
* **Long tokens** (Tantivy drops tokens over 40 characters, and hashes,
  base64 and long identifiers are exactly what a developer pastes) are cut
  into 40-character pieces in the index and searched as a phrase of pieces.

Kept free of anything heavier than ``re``: engines call ``index_text`` on the
hook's write path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sessions_graph.query import is_cjk, split_cjk

#: Longest token the engines' tokenizers keep whole (Tantivy's limit).
MAX_TOKEN_CHARS = 40
#: A turn is indexed with this many actions on each side of it...
TURN_RADIUS = 2
#: ... each contributing at most this many characters (a neighbour is context,
#: and a 50 KB tool result must not drown the turn it surrounds) ...
TURN_NEIGHBOUR_CHARS = 300
#: ... and its own text up to this many (the cut reconciliation makes too).
TURN_BODY_CHARS = 8000
#: What a match in the neighbours' text is worth next to one in the turn's own.
TURN_CONTEXT_WEIGHT = 0.3

_WORD = re.compile(r"[^\W_]+")
#: A speaker label opening a turn, the way chat logs and meeting transcripts
#: write who speaks: one to three capitalised words and a colon ("Caroline:",
#: "Dr. Mary Jones:").
_SPEAKER = re.compile(r"\s*((?:[A-Z][\w.'-]*)(?: [A-Z][\w.'-]*){0,2}):\s")
#: What a turn ends with after its words: an attachment note ("[shared
#: image: ...]", "[file: ...]"), closing quotes or brackets, spaces.
_TRAILER = re.compile(r"(?:\s*\[[^\[\]]*\])+\s*$|[\s\"')\]]+$")
_LONG = re.compile(rf"[^\W_]{{{MAX_TOKEN_CHARS + 1},}}")
#: Words that place what a turn tells in time: "yesterday", "two weeks ago",
#: "last Friday", "this year" (matched lowercased) ...
_TIME_CUE = re.compile(
    r"\b(?:yesterday|today|ago|last|weekends?|weeks?|months?|years?"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b"
)
#: ... each of which holds one of these: ``in`` finds them in C, so the
#: regular expression only runs on the texts that may have one ...
_TIME_CUE_PARTS = ("day", "ago", "last", "week", "month", "year")
#: ... within this many characters from the start: the hook path runs it on
#: every action, and a regular expression over an 8 KB tool result costs
#: 0.2 ms.
TIME_CUE_CHARS = 600
#: A question that asks when: "When did ...?", "... when was ...?", "What
#: year ...?", "How long ...?".
_ASKS_WHEN = re.compile(
    r"^\W*when\b|\bwhen (?:did|was|were|is|are|do|does|have|has|had)\b"
    r"|\b(?:what|which) (?:year|month|day|date|week|time)\b|\bhow long\b",
    re.IGNORECASE,
)

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


def index_text(text: str) -> str:
    """``text`` as the turn index stores it: CJK characters spaced apart and
    tokens over 40 characters cut into pieces; everything else unchanged."""
    # Cheap tests first: this runs on every action a hook stores, and almost
    # no text has CJK or a run of 41 letters without a space.
    if not text.isascii():
        text = "".join(f" {c} " if is_cjk(c) else c for c in text)
    if len(text) > MAX_TOKEN_CHARS and max(map(len, text.split()), default=0) > MAX_TOKEN_CHARS:
        text = _LONG.sub(lambda m: " ".join(_pieces(m.group())), text)
    return text


def turn_document(text: str) -> str:
    """An action's own text as the turn index stores it."""
    return index_text(text[:TURN_BODY_CHARS])


def turn_documents(rows: Sequence[Mapping[str, Any]], first_seq: int) -> list[dict[str, Any]]:
    """The turn-index documents to write after a session's actions from
    ``first_seq`` on were stored: ``rows`` are the session's actions from
    ``first_seq - 2 * TURN_RADIUS`` on, in order (``action_id``, ``seq``,
    ``text``). Each new action gets its document (``action_id``, ``body``,
    ``context``, ``speaker``, ``asks``, ``tells_time``), and the ``TURN_RADIUS`` actions
    before them get theirs again, since their neighbours changed; the ones
    further back are only read, as context."""
    prepared = [turn_document(r["text"] or "") for r in rows]
    documents = []
    for i, row in enumerate(rows):
        if row["seq"] < first_seq - TURN_RADIUS:
            continue
        around = range(max(0, i - TURN_RADIUS), min(len(rows), i + TURN_RADIUS + 1))
        parts = [prepared[j][:TURN_NEIGHBOUR_CHARS] for j in around if j != i]
        if i > 0:
            # The turn just before counts twice: a reply ("this has been
            # great for my mental health") is about what it answers, more
            # than about what comes after it.
            parts.append(prepared[i - 1][:TURN_NEIGHBOUR_CHARS])
        context = " ".join(parts)
        own = row["text"] or ""
        documents.append(
            {
                "action_id": row["action_id"],
                "body": prepared[i],
                "context": context,
                "speaker": speaker(own),
                "asks": asks(own),
                "tells_time": tells_time(own),
            }
        )
    return documents


def speaker(text: str) -> str | None:
    """Who says ``text``, when it opens with a speaker label ("Caroline:
    ..."): the label, casefolded. A question naming a person is mostly about
    what that person said (what they did, like, plan), so recall weighs the
    turns they spoke above the ones spoken to them."""
    match = _SPEAKER.match(text)
    return match.group(1).casefold() if match else None


def asks(text: str) -> bool:
    """Whether ``text`` ends by asking something: a turn that asks rarely holds
    the answer a question looks for; the reply after it does (and is indexed
    with it as context)."""
    tail = text[-400:]
    return "?" in tail and _TRAILER.sub("", tail).endswith("?")


def tells_time(text: str) -> bool:
    """Whether ``text`` places something in time ("we moved it to Redis last
    week"): a question asking when is answered by such a turn."""
    head = text[:TIME_CUE_CHARS].lower()
    return any(part in head for part in _TIME_CUE_PARTS) and _TIME_CUE.search(head) is not None


def asks_when(question: str) -> bool:
    """Whether ``question`` asks when something happened, or how long ago."""
    return _ASKS_WHEN.search(question) is not None


def _pieces(token: str) -> list[str]:
    return [token[i : i + MAX_TOKEN_CHARS] for i in range(0, len(token), MAX_TOKEN_CHARS)]


def _raw_terms(text: str) -> Iterator[tuple[str, ...]]:
    """Every word of ``text`` as a term (a tuple of index tokens): a plain
    word is one token, a long one its pieces, a CJK run its bigrams."""
    for match in _WORD.finditer(text):
        word = match.group().lower()
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
    yield tuple(_pieces(word)) if len(word) > MAX_TOKEN_CHARS else (word,)


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The distinct search terms of a question, in order, stop words and
    question words left out (unless nothing else is left), then the other
    forms of its irregular words ("went" and "gone" for "go"; see
    ``forms``). Each term is a tuple of index tokens, to be matched as a
    phrase."""
    terms = list(dict.fromkeys(_raw_terms(text)))
    content = [
        t for t in terms if len(t) > 1 or (t[0] not in STOP_WORDS and t[0] not in QUESTION_WORDS)
    ]
    if not content:
        return terms
    # Imported here: building the table is 0.5 ms that a hook which only
    # stores actions (and so imports this module) never needs.
    from sessions_graph.recall.forms import OTHER_FORMS

    forms = [(f,) for t in content if len(t) == 1 for f in OTHER_FORMS.get(t[0], ())]
    return list(dict.fromkeys(content + forms))


def words(text: str) -> list[str]:
    """The words of ``text`` as written (lowercased, CJK runs whole), in order."""
    return [m.group().lower() for m in _WORD.finditer(text)]
