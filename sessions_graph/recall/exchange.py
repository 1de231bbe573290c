"""Exchanges: a request and the reply to it, or a tool call and its result,
come back as one hit.

A turn hit on a ``user_message`` pulls the first ``assistant_message`` after
it (before the next request); a hit on an ``assistant_message`` pulls the
nearest request before it; a ``tool_call`` and its ``tool_result`` pull each
other by ``tool_use_id``. All within ``EXCHANGE_RADIUS`` actions of the hit
(the turn windows the engines read), so a reply that only follows many tool
calls stays a turn of its own, shown with its neighbours as before.

Each hit also has a *text key*, its exchange's (or its own) text folded:
hits of identical text are one hit, which names the other sessions that
said it (``also_in``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sessions_graph.engines.base import Engine, Record

#: Actions read on each side of a turn hit to find the other half of its exchange.
EXCHANGE_RADIUS = 2
#: Turn hits whose windows are read in one go, ahead of the selection, per
#: hit asked for: an exchange may take two places' worth of candidates.
BATCH_PER_HIT = 2
_SPACE = re.compile(r"\s+")


class Turn:
    """What the windows say about one turn hit. (A plain class: the
    ``dataclasses`` module costs a prompt's hook several milliseconds of
    imports.)"""

    __slots__ = ("exchange", "members", "text_key", "window")

    def __init__(self, window: list[Record], members: list[Record], exchange: str | None) -> None:
        self.window = window  # its session's actions around it, by seq
        self.members = members  # the exchange (request first), or just the turn
        self.exchange = exchange  # the exchange's key, None for a turn of its own
        # Identical texts share it (``text_key``).
        self.text_key = text_key("turn", [m.get("text") or "" for m in members])


def members_of(window: Sequence[Record], action_id: str) -> tuple[list[Record], str | None]:
    """The exchange ``action_id`` belongs to in ``window`` (one session's
    actions in seq order) and its key, or just the action and None."""
    at = next((i for i, a in enumerate(window) if a["action_id"] == action_id), None)
    if at is None:
        return [], None
    hit = window[at]
    kind = hit["action_type"]
    if kind == "user_message":
        for after in window[at + 1 :]:
            if after["action_type"] == "user_message":
                break
            if after["action_type"] == "assistant_message":
                return [hit, after], f"exchange:{hit['action_id']}"
    elif kind == "assistant_message":
        for before in reversed(window[:at]):
            if before["action_type"] == "user_message":
                return [before, hit], f"exchange:{before['action_id']}"
    elif kind in ("tool_call", "tool_result") and hit.get("tool_use_id"):
        other = "tool_result" if kind == "tool_call" else "tool_call"
        for action in window:
            if action["action_type"] == other and action.get("tool_use_id") == hit["tool_use_id"]:
                pair = [hit, action] if kind == "tool_call" else [action, hit]
                return pair, f"tool:{hit['session_id']}:{hit['tool_use_id']}"
    return [hit], None


def text_key(kind: str, texts: Sequence[str]) -> str:
    """Identical texts (case and spacing aside) share a key."""
    folded = "\x00".join(_SPACE.sub(" ", t).strip().casefold() for t in texts)
    return f"text:{kind}:{folded}"


class Exchanges:
    """The exchanges of turn hits, read ``BATCH_PER_HIT`` per hit asked for at a time, in rank order
    (the selection asks best first), each action's window once."""

    def __init__(self, engine: Engine, user_id: str, order: Sequence[str], limit: int) -> None:
        self._engine = engine
        self._user_id = user_id
        self._batch = BATCH_PER_HIT * limit
        self._pending = [k.removeprefix("turn:") for k in order if k.startswith("turn:")]
        self._turns: dict[str, Turn] = {}

    def turn(self, action_id: str) -> Turn | None:
        """The turn's window and exchange (None if the action is gone)."""
        if action_id not in self._turns:
            self._read(action_id)
        return self._turns.get(action_id)

    def _read(self, action_id: str) -> None:
        wanted = [action_id] + [
            a for a in self._pending[: self._batch] if a != action_id and a not in self._turns
        ]
        self._pending = [a for a in self._pending if a not in wanted]
        windows: dict[str, list[Record]] = {a: [] for a in wanted}
        for row in self._engine.turn_windows(self._user_id, wanted, EXCHANGE_RADIUS):
            windows[row["hit_id"]].append(row)
        for hit_id, rows in windows.items():
            if not rows:
                continue
            window = sorted(rows, key=lambda r: r["seq"])
            members, exchange = members_of(window, hit_id)
            if not members:
                continue
            self._turns[hit_id] = Turn(window, members, exchange)
