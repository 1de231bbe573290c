"""Compound forms: "road trip", "road-trip" and "roadtrip" are one word.

English writes a compound open, hyphenated or closed, and the same person
writes it all three ways ("set up" / "setup", "code base" / "codebase",
"check-up" / "checkup", "smart watch" / "smartwatch"). No stemmer joins
them: the index holds "roadtrip" as one token and "road trip" as two. So a
question's words are also searched in their other compound forms:

* a **closed** word as its two halves, a phrase ("smartwatch" -> "smart
  watch", which a hyphenated "smart-watch" matches too), at every cut
  where both halves have at least ``MIN_HALF`` letters, or where the
  second half is a particle ("setup" -> "set up", "checkups" -> "check
  ups");
* two **adjacent** words as one ("road trip" -> "roadtrip"), when the
  first is not a stop word and the second is not one either, or is a
  particle ("set up" -> "setup").

Cuts that are no compound ("transformation" -> "trans formation") cost a
search term that matches nothing: the engines drop terms no document holds.
Shorter halves would not: a stemmer cuts them to a common word's stem
("Melanie" -> "mel" + "anie", whose stem is the stem of "any", and "Hey Mel!
Any news?" holds that phrase).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

#: Fewest letters of each half a closed word is cut into.
MIN_HALF = 4
#: Particles that make compounds of verbs ("set up" / "setup", "check out" /
#: "checkout", "take off", "break down", "take over"). Not "in" and "on":
#: they end too many words that are no compounds ("lesson" -> "less on",
#: "season" -> "sea on" once stemmed, "protein" -> "prote in").
PARTICLES = frozenset({"up", "out", "off", "down", "over"})
#: Fewest letters of a word a particle follows ("set up"; not "go on").
MIN_HEAD = 3
#: Longest word cut, and longest word joined: a longer run of letters is
#: an identifier, not a compound, and each cut is one more search term.
MAX_CUT = 20
#: Most compound forms of one question: each costs a look-up in the index,
#: and a pasted log of a thousand characters would make hundreds (20 ms
#: more on the embedded engine; with this bound, about 2).
MAX_FORMS = 64


def compound_forms(words: Sequence[str], stop_words: Collection[str]) -> list[tuple[str, ...]]:
    """The other compound forms of a question's ``words`` (lowercased, in
    order), as search terms (tuples of index tokens): word by word, its
    halves as phrases, then it joined with the next word; distinct, the
    first ``MAX_FORMS``."""
    forms: dict[tuple[str, ...], None] = {}
    for word, after in zip(words, [*words[1:], ""], strict=True):
        if word in stop_words or not (word.isascii() and word.isalpha()):
            continue
        if len(word) <= MAX_CUT:
            for cut in range(MIN_HEAD, len(word) - 1):
                head, tail = word[:cut], word[cut:]
                if (len(head) >= MIN_HALF and len(tail) >= MIN_HALF) or _particle(tail):
                    forms[(head, tail)] = None
        joined = word + after
        if (
            after
            and len(word) >= MIN_HEAD
            and (after not in stop_words or after in PARTICLES)
            and joined.isascii()
            and joined.isalpha()
            and len(joined) <= MAX_CUT
        ):
            forms[(joined,)] = None
    return list(forms)[:MAX_FORMS]


def _particle(tail: str) -> bool:
    """Whether ``tail`` is a particle, or one in the plural ("check-ups")."""
    return tail in PARTICLES or (tail.endswith("s") and tail[:-1] in PARTICLES)
