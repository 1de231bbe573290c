"""Interactions: one question asked within a session, the context given with
it, the answer, and what the answer used.

Plain functions over plain dicts, shared by the façade (``graph.py``), the
hooks and the recall layer: the hook process builds and answers
interactions without loading pydantic.

* An interaction's **context items** are the hits given with the question:
  ``{key, kind, id, text, used}``, where ``key`` is recall's element key
  (``turn:<action_id>``, ``memory:<memory_id>``, ``entity:<casefolded
  name>``), the key its feedback weight is kept under.
* **Used, without asking**: when the answer arrives, an item is marked
  ``used`` when the answer (or the tool inputs that produced it) carries a
  *distinctive token* of the item that the question did not: an
  identifier, a path, a number, a rare word (``distinctive_tokens``). A
  token the question already held proves nothing: the answer may echo the
  question. Measured in ``bench/bench_feedback.py`` before it may count
  as feedback (``implicit_feedback``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

Record = dict[str, Any]

#: Longest question and answer kept, in characters (a long paste's
#: opening says what it is about; an answer is kept for recall, not whole).
MAX_QUESTION_CHARS = 2_000
MAX_ANSWER_CHARS = 8_000
#: Longest text of one context item kept with the interaction.
ITEM_CHARS = 600
#: The rating scale: 1 (wrong) to 5 (helped).
MIN_SCORE, MAX_SCORE = 1, 5
#: The weight an element has before any rating.
NEUTRAL_WEIGHT = 0.5
#: Sources of an interaction.
SOURCES = ("prompt", "recall", "mcp")

#: Kinds of hit whose weight feedback keeps, and how their key is made.
_KEY_FIELDS = {"turn": "action_id", "memory": "memory_id", "entity": "entity"}

# A token: letters, digits and the joiners identifiers and paths are made of.
_TOKEN = re.compile(r"[\w./:@#-]*\w", re.UNICODE)
_DIGIT = re.compile(r"\d")
_JOINED = re.compile(r"\w[./_:@#-]\w")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
#: A plain word is rare enough to prove use from this many letters on
#: (common English words are shorter: the median English word has 4-5).
RARE_WORD_CHARS = 9
#: A bare number proves use from this many digits on ("3" and "10" are
#: everywhere; "4317" or "2023" are not).
NUMBER_DIGITS = 3
#: Speaker labels and markers that every LoCoMo-like or chat line carries,
#: and the words of our own rendering: never evidence of use.
_IGNORED = frozenset({"redacted", "assistant", "user", "tool", "result", "session"})


def element_key(hit: Record) -> str | None:
    """The key a hit's feedback weight is kept under, or None for a hit that
    has none (an interaction)."""
    field = _KEY_FIELDS.get(hit.get("kind") or "")
    value = hit.get(field) if field else None
    if not value:
        return None
    return f"entity:{value.casefold()}" if hit["kind"] == "entity" else f"{hit['kind']}:{value}"


def context_items(hits: Iterable[Record]) -> list[Record]:
    """The context items of an interaction, from the hits given with it. A
    hit showing an exchange (a request and its reply) gives one item per
    turn, each with its own line: the answer may use the reply and not the
    request, and each turn keeps a weight of its own."""
    items = []
    for hit in hits:
        key = element_key(hit)
        if key is None:
            continue
        own = [
            line[2:].strip()
            for line in (hit.get("text") or "").splitlines()
            if line.startswith(">>")
        ]
        exchange = hit.get("exchange") or []
        if hit["kind"] == "turn" and exchange and len(own) == len(exchange):
            items += [
                {
                    "key": f"turn:{i}",
                    "kind": "turn",
                    "id": i,
                    "text": line[:ITEM_CHARS],
                    "used": None,
                }
                for i, line in zip(exchange, own, strict=True)
            ]
            continue
        items.append(
            {
                "key": key,
                "kind": hit["kind"],
                "id": key.split(":", 1)[1],
                "text": _own_text(hit.get("text") or "")[:ITEM_CHARS],
                "used": None,
            }
        )
    return items


def _own_text(text: str) -> str:
    """A turn hit's own line (marked ``>>``, without its neighbours, which
    are other elements), else the whole text."""
    for line in text.splitlines():
        if line.startswith(">>"):
            return line[2:].strip()
    return text


def distinctive_tokens(text: str) -> set[str]:
    """The tokens of ``text`` that name something specific, casefolded: an
    identifier or path (letters or digits joined by ``. / _ : - @ #``, or
    camelCase), a number of ``NUMBER_DIGITS`` or more digits, a word with
    digits in it, or a word of ``RARE_WORD_CHARS`` or more letters."""
    found = set()
    for match in _TOKEN.finditer(text):
        token = match.group().strip(".:-#@/")
        if len(token) < 3:
            continue
        folded = token.casefold()
        if folded in _IGNORED:
            continue
        if _DIGIT.search(token):
            if token.isdigit() and len(token) < NUMBER_DIGITS:
                continue
            found.add(folded)
        elif (
            _JOINED.search(token)
            or _INNER_CAPITAL.search(token)
            or (len(token) >= RARE_WORD_CHARS and token.isalpha())
        ):
            found.add(folded)
    return found


def _all_tokens(text: str) -> set[str]:
    """Every token of ``text`` and the parts of its joined ones, casefolded:
    what an answer "carries" (it may name ``settings.py`` as ``settings.py``
    or quote a path's last part)."""
    tokens = set()
    for match in _TOKEN.finditer(text):
        token = match.group().strip(".:-#@/").casefold()
        tokens.add(token)
    return tokens


def mark_used(items: Sequence[Record], question: str, answer: str) -> list[Record]:
    """The items with ``used`` set: True when the answer carries one of the
    item's distinctive tokens that the question did not, else False."""
    asked = _all_tokens(question)
    said = _all_tokens(answer)
    marked = []
    for item in items:
        own = distinctive_tokens(item.get("text") or "") - asked
        marked.append({**item, "used": bool(own & said)})
    return marked


def blend(weight: float, influence: float) -> float:
    """The factor an element's fused score is multiplied by: 1 for a weight
    of 0.5 (never rated) or an influence of 0, up to ``1 + influence`` for a
    weight of 1 and down to ``1 - influence`` for 0."""
    return 1.0 + influence * (2.0 * weight - 1.0)
