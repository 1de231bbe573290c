"""Fusion: the lanes' rankings become one, by reciprocal rank.

Scores from different lanes (BM25 on one engine, Tantivy on the other, a
list of entity mentions) are not comparable, ranks are: an item scores
``weight / (RRF_K + rank)`` in every lane that found it, summed. Then:

* **No session crowds out the rest.** Once a session holds half the places
  asked for, each further item of it is scaled by ``SESSION_DECAY`` per
  item it already placed. Evidence often sits in neighbouring turns of one
  session (on the LoCoMo benchmark any earlier decay cost up to 0.10 of
  turn recall@5), so a session may fill half the list, not all of it.
* **The last places spread out.** From ``SPREAD_FROM`` of the list on, an
  item is also scaled by ``SESSION_DECAY`` per item its session already
  placed: the tail goes to sessions not shown yet (on LoCoMo, +0.007 of
  session recall@5 with turn recall@5 unchanged; spreading from the middle
  cost 0.02 of turn recall@10).
* **Recency only breaks ties**: equal scores go newest first.
* **One place per group.** An item that belongs with one already placed
  (the other half of its exchange, the same text in another session) joins
  it instead of taking a place (``select``'s ``group_of``).
"""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

Record = dict[str, Any]

#: The usual RRF constant: how much more rank 1 weighs than rank 10.
RRF_K = 60
#: What a lane's rank is worth, relative to the keyword lane.
LANE_WEIGHTS: Mapping[str, float] = {
    "keyword": 1.0,
    "dates": 1.0,
    "entities": 0.8,
    "memories": 1.0,
}
#: The share of the places one session fills before the decay starts ...
SESSION_SHARE = 0.5
#: ... and the factor per item placed from the same session after those.
SESSION_DECAY = 0.5
#: The share of the list after which every place prefers a new session.
SPREAD_FROM = 0.8


class Ranked(NamedTuple):
    """Every item the lanes found, fused: ``order`` best first (recency
    breaking ties), with each key's item, score and lanes."""

    order: list[str]
    items: dict[str, Record]
    scores: dict[str, float]
    found: dict[str, list[str]]


def rank(
    lanes: Mapping[str, Sequence[tuple[str, Record]]],
    boost: Mapping[str, float] | None = None,
) -> Ranked:
    """Reciprocal rank fusion of the lanes' rankings, each a list of (key,
    item); an item is the first record any lane gave for its key. A key's
    ``boost`` (the feedback factor, when one is given) multiplies its score."""
    items: dict[str, Record] = {}
    scores: dict[str, float] = {}
    found: dict[str, list[str]] = {}
    for lane, ranked in lanes.items():
        weight = LANE_WEIGHTS.get(lane, 1.0)
        for position, (key, item) in enumerate(ranked, start=1):
            items.setdefault(key, item)
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + position)
            found.setdefault(key, []).append(lane)
    for key, factor in (boost or {}).items():
        if key in scores:
            scores[key] *= factor
    order = sorted(items, key=lambda k: (scores[k], items[k].get("timestamp") or ""), reverse=True)
    return Ranked(order, items, scores, found)


def fuse(
    lanes: Mapping[str, Sequence[tuple[str, Record]]],
    limit: int,
    session_of: Callable[[Record], str | None] = lambda r: r.get("session_id"),
    group_of: Callable[[str, Record], Sequence[str]] | None = None,
    boost: Mapping[str, float] | None = None,
) -> list[Record]:
    """The ``limit`` best items over all lanes (``rank``, then ``select``)."""
    return select(rank(lanes, boost), limit, session_of, group_of)


def select(
    ranked: Ranked,
    limit: int,
    session_of: Callable[[Record], str | None] = lambda r: r.get("session_id"),
    group_of: Callable[[str, Record], Sequence[str]] | None = None,
) -> list[Record]:
    """The ``limit`` best of the ranked items, with the session decay; each
    with ``key`` set to its key, ``score`` to its fused score and ``lanes``
    to the lanes that found it (in ``LANE_WEIGHTS`` order).

    ``group_of(key, item)`` names the groups an item belongs to (an
    exchange, a text): an item sharing a group with one already placed takes
    no place of its own but joins it, listed in its ``merged`` (key, item)
    pairs, its lanes added. It is asked only for items about to be placed,
    best first."""
    scores = dict(ranked.scores)
    items, found = ranked.items, ranked.found
    # Greedy selection with the session decay: take items best first; one
    # whose session has filled its share is put back with its decayed score
    # (a score only ever goes down, so the first item that needs no decay
    # is the best one left). Lazy re-insertion into a heap does exactly that.
    free = max(1, round(limit * SESSION_SHARE))
    spread = max(1, round(limit * SPREAD_FROM))
    per_session: dict[str, int] = {}
    heap = [(-scores[k], _desc(items[k]), i, k) for i, k in enumerate(ranked.order)]
    heapq.heapify(heap)
    placed: list[str] = []
    group_owner: dict[str, str] = {}  # group -> the placed key holding it
    merged: dict[str, list[str]] = {}
    while heap and len(placed) < limit:
        negative, stamp, i, key = heapq.heappop(heap)
        session = session_of(items[key])
        seen = per_session.get(session, 0) if session else 0
        wanted = scores[key] * SESSION_DECAY ** max(0, seen - free + 1)
        if len(placed) >= spread:  # only grows, so scores still only go down
            wanted *= SESSION_DECAY**seen
        if wanted < -negative:  # decayed since it was queued: queue it again
            heapq.heappush(heap, (-wanted, stamp, i, key))
            continue
        groups = list(group_of(key, items[key])) if group_of else []
        owner = next((group_owner[g] for g in groups if g in group_owner), None)
        if owner is not None:
            merged[owner].append(key)
            for group in groups:
                group_owner.setdefault(group, owner)
            continue
        if session:
            per_session[session] = seen + 1
        scores[key] = wanted
        placed.append(key)
        merged[key] = []
        for group in groups:
            group_owner.setdefault(group, key)
    return [
        {
            **items[key],
            "key": key,
            "score": round(scores[key], 6),
            "lanes": _lanes(found[key] + [lane for k in merged[key] for lane in found[k]]),
            **({"merged": [(k, items[k]) for k in merged[key]]} if merged[key] else {}),
        }
        for key in placed
    ]


def _lanes(names: Sequence[str]) -> list[str]:
    """The lanes, each once, in ``LANE_WEIGHTS`` order."""
    ordered = list(LANE_WEIGHTS)
    return sorted(
        dict.fromkeys(names),
        key=lambda n: ordered.index(n) if n in ordered else len(ordered),
    )


def _desc(item: Record) -> tuple[int, ...]:
    """A heap key that puts later timestamps first (recency breaks ties)."""
    stamp = item.get("timestamp")
    return tuple(-ord(c) for c in stamp) if stamp else (1,)  # undated last
