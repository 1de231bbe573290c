"""Fusion: the lanes' rankings become one, by reciprocal rank.

Scores from different lanes (BM25 on one engine, Tantivy on the other, a
list of entity mentions) are not comparable, ranks are: an item scores
``weight / (RRF_K + rank)`` in every lane that found it, summed. Then:

* **No session crowds out the rest.** A session's second, third, ... item
  is scaled by ``SESSION_DECAY`` per item already placed from that session.
  Evidence often sits in neighbouring turns, so the decay is gentle, not a cap.
* **Recency only breaks ties**: equal scores go newest first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
#: Factor per item already placed from the same session.
SESSION_DECAY = 0.8


def fuse(
    lanes: Mapping[str, Sequence[tuple[str, Record]]],
    limit: int,
    session_of: Callable[[Record], str | None] = lambda r: r.get("session_id"),
) -> list[Record]:
    """The ``limit`` best items over all lanes; each lane is a ranked list of
    (key, item). An item is the first record any lane gave for its key, with
    ``score`` set to its fused score and ``lanes`` to the lanes that found it
    (in ``LANE_WEIGHTS`` order)."""
    items: dict[str, Record] = {}
    scores: dict[str, float] = {}
    found: dict[str, list[str]] = {}
    for lane, ranked in lanes.items():
        weight = LANE_WEIGHTS.get(lane, 1.0)
        for rank, (key, item) in enumerate(ranked, start=1):
            items.setdefault(key, item)
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank)
            found.setdefault(key, []).append(lane)
    order = sorted(items, key=lambda k: (scores[k], items[k].get("timestamp") or ""), reverse=True)
    # Greedy selection with the session decay: at each step take the best
    # item given what is already placed. Only the head of the list can move,
    # so it is enough to look a little beyond what is left to fill.
    placed: list[str] = []
    per_session: dict[str, int] = {}
    pool = order[: max(limit * 4, 40)]
    while pool and len(placed) < limit:

        def adjusted(key: str) -> tuple[float, str]:
            session = session_of(items[key])
            seen = per_session.get(session, 0) if session else 0
            return scores[key] * SESSION_DECAY**seen, items[key].get("timestamp") or ""

        best = max(pool, key=adjusted)
        pool.remove(best)
        session = session_of(items[best])
        if session:
            per_session[session] = per_session.get(session, 0) + 1
        scores[best] = adjusted(best)[0]
        placed.append(best)
    ordered_lanes = list(LANE_WEIGHTS)
    return [
        {
            **items[key],
            "score": round(scores[key], 6),
            "lanes": sorted(
                found[key],
                key=lambda n: ordered_lanes.index(n) if n in ordered_lanes else len(ordered_lanes),
            ),
        }
        for key in placed
    ]
