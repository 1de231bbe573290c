"""Word stems for a text index that has none: Memgraph's.

The embedded engine's FTS5 table uses the ``porter`` tokenizer, so
"databases", "database" and "databased" are one token there and a question
in one form finds a turn in another. Tantivy's default tokenizer, which
Memgraph's text index uses, does not stem. So the Memgraph engine does what
FTS5's tokenizer does, on both sides: a turn document is written as the
Porter stems of its words (``stemmed``) and a question's terms are asked as
theirs (``stemmed_terms``). Nothing reads the documents back but the index.

Words are cut as Tantivy cuts them (runs of letters and digits, lowercased),
so each word becomes exactly one stem and phrases (a long word's pieces, CJK
bigrams) keep their positions. The stems come from PyStemmer (Snowball's
``porter``, the algorithm FTS5's tokenizer implements), part of the
``memgraph`` extra; imported on first use, by a Memgraph engine that writes or
searches turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

_WORD = re.compile(r"[^\W_]+")


@cache
def _stemmer() -> Any:
    import Stemmer  # PyStemmer: the memgraph extra

    return Stemmer.Stemmer("porter")


def stemmed(document: str) -> str:
    """``document``'s words as their stems, space-separated ("The migrations
    failed" -> "the migrat fail")."""
    return " ".join(_stemmer().stemWords(_WORD.findall(document.lower())))


def stemmed_terms(terms: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Search terms (each a phrase of index tokens) with every token stemmed
    as ``stemmed`` stems a document's, distinct and in order."""
    stem = _stemmer().stemWords
    return list(dict.fromkeys(tuple(stem(list(t))) for t in terms))
