"""Fusion's rules, on rankings made for each: one session fills at most half
the list, and equal scores go newest first."""

from __future__ import annotations

from typing import Any

from sessions_graph.recall.fusion import fuse


def item(session: str, n: int, timestamp: str = "2024-01-01T00:00:00Z") -> tuple[str, Any]:
    return f"{session}-{n}", {"session_id": session, "timestamp": timestamp}


def test_one_session_fills_at_most_half_the_list_before_others() -> None:
    ranked = [item("a", n) for n in range(6)] + [item("b", 0), item("c", 0)]
    placed = [r["session_id"] for r in fuse({"keyword": ranked}, limit=4)]
    # a's first two places are free; b (ranked 7th) beats a's decayed third.
    assert placed[:3] == ["a", "a", "b"]


def test_equal_scores_go_newest_first() -> None:
    old = item("a", 0, "2023-01-01T00:00:00Z")
    new = item("b", 0, "2024-06-01T00:00:00Z")
    fused = fuse({"keyword": [old], "memories": [new]}, limit=2)
    assert [r["session_id"] for r in fused] == ["b", "a"]
    assert fused[0]["score"] == fused[1]["score"]
