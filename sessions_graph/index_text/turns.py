"""Turn documents: what the turn index holds for each action, written the
same way on both engines and read by recall's lanes.

An action's document is its own text, its neighbours' text as context
(weighed less), and marks read from its own text: its **Speaker**
(``Caroline: ...``), whether it is an **Asking Turn**, whether it only asks,
whether it has a **Time Cue**, and its **Told Time** (CONTEXT.md). Kept free of anything
heavier than ``re``: the engines build these documents on the hook's write
path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sessions_graph.index_text.told import told_window
from sessions_graph.index_text.words import index_text

#: A turn is indexed with this many actions on each side of it...
TURN_RADIUS = 2
#: ... each contributing at most this many characters (a neighbour is context,
#: and a 50 KB tool result must not drown the turn it surrounds) ...
TURN_NEIGHBOUR_CHARS = 300
#: ... and its own text up to this many (the cut reconciliation makes too).
TURN_BODY_CHARS = 8000
#: What a match in the neighbours' text is worth next to one in the turn's own.
TURN_CONTEXT_WEIGHT = 0.3

#: A speaker label opening a turn, the way chat logs and meeting transcripts
#: write who speaks: one to three capitalised words and a colon ("Caroline:",
#: "Dr. Mary Jones:").
_SPEAKER = re.compile(r"\s*((?:[A-Z][\w.'-]*)(?: [A-Z][\w.'-]*){0,2}):\s")
#: What a turn ends with after its words: an attachment note ("[shared
#: image: ...]", "[file: ...]"), closing quotes or brackets, spaces.
_TRAILER = re.compile(r"(?:\s*\[[^\[\]]*\])+\s*$|[\s\"')\]]+$")
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
#: An Asking Turn that only asks says at most this many words outside its
#: questions: an exclamation or a greeting ("Congrats! How did it feel?",
#: "Thanks, Tim! Which one?"), nothing a question could be looking for.
ONLY_ASKS_WORDS = 2
#: ... and is no longer than this: a longer turn that ends by asking has
#: told something first.
ONLY_ASKS_CHARS = 300
#: A sentence: up to its end mark (or the end of the text).
_SENTENCE = re.compile(r"[^.!?]*[.!?]+|[^.!?]+$")
#: A question that asks when: "When did ...?", "... when was ...?", "What
#: year ...?", "How long ...?".
_ASKS_WHEN = re.compile(
    r"^\W*when\b|\bwhen (?:did|was|were|is|are|do|does|have|has|had)\b"
    r"|\b(?:what|which) (?:year|month|day|date|week|time)\b|\bhow long\b",
    re.IGNORECASE,
)


def turn_document(text: str) -> str:
    """An action's own text as the turn index stores it."""
    return index_text(text[:TURN_BODY_CHARS])


def turn_documents(rows: Sequence[Mapping[str, Any]], first_seq: int) -> list[dict[str, Any]]:
    """The turn-index documents to write after a session's actions from
    ``first_seq`` on were stored: ``rows`` are the session's conversation
    actions from ``first_seq`` on, after the ``2 * TURN_RADIUS`` just before
    it (or all there are), in order (``action_id``, ``seq``, ``text``,
    ``said_at``: its timestamp, else its session's start). Each new action
    gets its document (``action_id``, ``body``, ``context``, ``speaker``,
    ``asks``, ``only_asks``, ``tells_time``, ``told_since`` /
    ``told_until``: its Told Time, or None), and the
    ``TURN_RADIUS`` actions before them get theirs again, since their
    neighbours changed; the ones further back are only read, as context.

    Neighbours are counted among these rows, never by ``seq``: the derived and
    client actions between two turns are no one's neighbours, however many."""
    prepared = [turn_document(r["text"] or "") for r in rows]
    new = next((i for i, r in enumerate(rows) if r["seq"] >= first_seq), len(rows))
    documents = []
    for i, row in enumerate(rows):
        if i < new - TURN_RADIUS:
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
        told = told_window(own, row.get("said_at"))
        documents.append(
            {
                "action_id": row["action_id"],
                "body": prepared[i],
                "context": context,
                "speaker": speaker(own),
                "asks": asks(own),
                "only_asks": only_asks(own),
                "tells_time": tells_time(own),
                "told_since": told[0] if told else None,
                "told_until": told[1] if told else None,
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


def only_asks(text: str) -> bool:
    """Whether ``text`` is an Asking Turn that tells nothing besides its
    questions ("Wow! What got you into running?", "Shall I run the tests
    too?"). Such a turn holds none of what a question looks for, however
    well its words match: the answer is in the reply. A turn that tells
    something and then asks ("We moved to Redis last week. Did it help?")
    holds something, and is only an Asking Turn."""
    if len(text) > ONLY_ASKS_CHARS or not asks(text):
        return False
    label = _SPEAKER.match(text)
    own = _TRAILER.sub("", text[label.end() :] if label else text)
    told = (s for s in _SENTENCE.findall(own) if not s.rstrip(" \"')]").endswith("?"))
    return sum(len(s.split()) for s in told) <= ONLY_ASKS_WORDS


def tells_time(text: str) -> bool:
    """Whether ``text`` places something in time ("we moved it to Redis last
    week"): a question asking when is answered by such a turn."""
    head = text[:TIME_CUE_CHARS].lower()
    return any(part in head for part in _TIME_CUE_PARTS) and _TIME_CUE.search(head) is not None


def asks_when(question: str) -> bool:
    """Whether ``question`` asks when something happened, or how long ago."""
    return _ASKS_WHEN.search(question) is not None
