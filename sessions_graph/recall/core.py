"""One recall: check the request, run the lanes, fuse, build readable hits."""

from __future__ import annotations

from typing import Any

from sessions_graph.engines.base import Engine, Record
from sessions_graph.errors import MemoryValidationError
from sessions_graph.index_text.words import written
from sessions_graph.interactions import NEUTRAL_WEIGHT, blend
from sessions_graph.recall import fusion, lanes
from sessions_graph.recall.exchange import Exchanges, text_key
from sessions_graph.recall.render import ENTITY_CHARS, MEMORY_CHARS, snippet, turn_text
from sessions_graph.recall.request import Request, check_request

#: Turns shown before and after a matched turn.
CONTEXT_TURNS = 1
#: Most of the asking session's interactions placed first (session-first
#: recall); never more than half the places asked for.
INTERACTION_HITS = 3


def recall(
    engine: Engine, user_id: str, query: str, *, feedback_influence: float = 0.0, **options: Any
) -> Record:
    """A user's past turns, memories and entities for ``query``, best first.

    Options as ``SessionsGraph.recall``: ``limit`` (1-100), ``session_id``,
    ``scope``, ``since``, ``until``, ``project``. Returns ``{"user_id",
    "query", "hits"}``, each hit a dict: ``kind`` ("interaction" | "turn" |
    "memory" | "entity"), ``score``, ``lanes``, ``session_id``,
    ``timestamp``, ``text``, ``feedback_weight`` and per kind
    ``interaction_id``, ``action_id`` / ``action_type`` / ``exchange`` (the
    ids of the actions a turn hit shows: its exchange, request first),
    ``memory_id``, ``entity`` / ``entity_type`` / ``sessions``; ``also_in``:
    the other sessions where the same text was found (one hit for all).

    ``feedback_influence`` (0-1) bends the fused ranking by the user's
    feedback weights (``interactions.blend``); 0 leaves it exactly as it is.
    With scope ``interactions`` (``auto`` with a session), the asking
    session's interactions that match the question come first.
    """
    if (
        isinstance(feedback_influence, bool)
        or not isinstance(feedback_influence, (int, float))
        or not 0.0 <= feedback_influence <= 1.0
    ):
        raise MemoryValidationError("feedback_influence must be a number from 0 to 1")
    req = check_request(user_id, query, **options)
    first: list[Record] = []
    if "interactions" in req.scope:
        room = min(INTERACTION_HITS, max(1, req.limit // 2))
        first = [_interaction(r) for r in lanes.interactions(engine, req)[:room]]
    ranked: dict[str, list[tuple[str, Record]]] = {}
    if {"turns", "session"} & req.scope:
        ranked["keyword"] = [
            (_turn_key(r["action_id"]), _turn(r)) for r in lanes.keyword(engine, req)
        ]
        ranked["dates"] = [(_turn_key(r["action_id"]), _turn(r)) for r in lanes.dates(engine, req)]
    if "entities" in req.scope:
        # Only when entities are asked for: the prompt hook (turns and
        # memories) must not pay for a look-up through every mention.
        ranked["entities"] = _entity_lane(engine, req)
    if "memories" in req.scope:
        ranked["memories"] = [
            (f"memory:{m['memory_id']}", _memory(m)) for m in lanes.memories(engine, req, req.limit)
        ]
    ranked = {k: v for k, v in ranked.items() if v}
    keys = list(dict.fromkeys(key for found in ranked.values() for key, _ in found))
    weights = engine.feedback_weights(req.user_id, keys) if keys else {}
    boost = (
        {k: blend(w, feedback_influence) for k, w in weights.items()} if feedback_influence else {}
    )
    fused = fusion.rank(ranked, boost)
    places = req.limit - len(first)
    exchanges = Exchanges(engine, req.user_id, fused.order, places)

    def group_of(key: str, item: Record) -> list[str]:
        # An exchange is one hit, and so is one text said in several sessions.
        if item["kind"] == "memory":
            return [text_key("memory", [item["text"]])]
        if item["kind"] != "turn":
            return []
        turn = exchanges.turn(item["action_id"])
        if turn is None:
            return []
        return [turn.exchange or key, turn.text_key]

    hits = fusion.select(fused, places, group_of=group_of)
    # What snippets are centred on: each term as the text writes it (a hash
    # asked for, its pieces joined with spaces, was never found in its turn,
    # and the snippet showed the turn's start instead).
    words = [written(t) for t in req.terms]
    for hit in hits:
        hit["feedback_weight"] = weights.get(hit.pop("key"), NEUTRAL_WEIGHT)
        merged = hit.pop("merged", [])
        others = [item.get("session_id") for _, item in merged]
        also = [s for s in dict.fromkeys(others) if s and s != hit.get("session_id")]
        if also:
            hit["also_in"] = also
        if hit["kind"] == "turn":
            _turn_text(hit, exchanges, [item for _, item in merged], words)
    return {"user_id": req.user_id, "query": req.query, "hits": first + hits}


def _interaction(row: Record) -> Record:
    """An interaction of the asking session as a hit: its question and answer."""
    text = f"Q: {snippet(row['question'], MEMORY_CHARS // 2)}"
    if row.get("answer"):
        text += f"\nA: {snippet(row['answer'], MEMORY_CHARS)}"
    return {
        "kind": "interaction",
        "interaction_id": row["interaction_id"],
        "session_id": row["session_id"],
        "timestamp": row["created_at"],
        "text": text,
        "score": float(row["matched"]),
        "lanes": ["interactions"],
        "feedback_weight": NEUTRAL_WEIGHT,
    }


def _turn_key(action_id: str) -> str:
    return f"turn:{action_id}"


def _turn(row: Record) -> Record:
    return {
        "kind": "turn",
        "action_id": row["action_id"],
        "action_type": row.get("action_type"),
        "session_id": row["session_id"],
        "timestamp": row.get("timestamp"),
        "text": "",
    }


def _memory(row: Record) -> Record:
    return {
        "kind": "memory",
        "memory_id": row["memory_id"],
        "session_id": row.get("session_id"),
        "project_key": row.get("project_key"),
        "timestamp": row.get("updated_at") or row.get("created_at"),
        "text": snippet(row["content"], MEMORY_CHARS),
    }


def _entity_lane(engine: Engine, req: Request) -> list[tuple[str, Record]]:
    """Entities (the lane runs only when they are asked for) and the turns
    that mention them, interleaved in entity order: an entity, then its
    mentioning turns, newest first."""
    out: list[tuple[str, Record]] = []
    for row in lanes.entities(engine, req):
        # A memory saved outside any session has no session to list.
        sessions = list(dict.fromkeys(u["session_id"] for u in row["units"] if u["session_id"]))
        out.append(
            (
                f"entity:{row['name'].casefold()}",
                {
                    "kind": "entity",
                    "entity": row["name"],
                    "entity_type": row.get("entity_type"),
                    "sessions": sessions,
                    "session_id": sessions[0] if sessions else None,
                    "timestamp": row["units"][0].get("timestamp"),
                    "text": snippet(row.get("description") or "", ENTITY_CHARS)
                    or "(no description)",
                },
            )
        )
        if "turns" in req.scope:
            for unit in row["units"]:
                if unit["unit_kind"] == "action":
                    out.append(
                        (_turn_key(unit["unit_id"]), _turn({**unit, "action_id": unit["unit_id"]}))
                    )
    return out


def _turn_text(hit: Record, exchanges: Exchanges, merged: list[Record], words: list[str]) -> None:
    """Give a turn hit its text and ``exchange`` (the ids of the actions it
    shows): its exchange, request first (with the other replies of the same
    request that were hits too), or the turn with its neighbours."""
    turn = exchanges.turn(hit["action_id"])
    if turn is None:
        return
    matched = {hit["action_id"]}
    if turn.exchange is None:
        at = next(i for i, a in enumerate(turn.window) if a["action_id"] == hit["action_id"])
        shown = turn.window[max(0, at - CONTEXT_TURNS) : at + CONTEXT_TURNS + 1]
    else:
        shown = list(turn.members)
        for item in merged:
            other = exchanges.turn(item["action_id"])
            if other is not None and other.exchange == turn.exchange:
                matched.add(item["action_id"])
                ids = {a["action_id"] for a in shown}
                shown += [m for m in other.members if m["action_id"] not in ids]
        shown.sort(key=lambda a: a["seq"])
    hit["text"] = turn_text(shown, matched, words)
    hit["action_type"] = next(
        a["action_type"] for a in turn.window if a["action_id"] == hit["action_id"]
    )
    hit["exchange"] = [a["action_id"] for a in (shown if turn.exchange else [turn.members[0]])]
