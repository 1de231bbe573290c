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


def _keys(fused: list[dict[str, Any]]) -> list[str]:
    return [r["key"] for r in fused]


def test_an_item_scores_its_lane_weight_over_60_plus_its_rank_in_each_lane() -> None:
    """Reciprocal rank fusion as documented: ``weight / (60 + rank)`` summed
    over the lanes that found it (entities weigh 0.8), given to six places.
    An item two lanes found at rank 2 passes one a single lane found first."""
    fused = fuse(
        {
            "keyword": [item("a", 0), item("b", 0)],
            "dates": [item("c", 0), item("b", 0)],
            "entities": [item("d", 0)],
        },
        limit=4,
    )
    assert _keys(fused) == ["b-0", "a-0", "c-0", "d-0"]
    assert [r["score"] for r in fused] == [
        round(2 / 62, 6),
        round(1 / 61, 6),
        round(1 / 61, 6),
        round(0.8 / 61, 6),
    ]
    assert fused[0]["score"] == 0.032258 and fused[3]["score"] == 0.013115


def test_a_hit_lists_the_lanes_that_found_it_in_a_fixed_order() -> None:
    same = ("k", {"session_id": "a", "timestamp": "2024-01-01T00:00:00Z"})
    fused = fuse({"other": [same], "memories": [same], "dates": [same], "keyword": [same]}, 1)
    # The known lanes in their own order, then any other.
    assert fused[0]["lanes"] == ["keyword", "dates", "memories", "other"]


def test_a_boost_multiplies_the_score_of_its_key_only() -> None:
    ranked = {"keyword": [item("a", 0), item("b", 0)]}
    boosted = fuse(ranked, 2, boost={"b-0": 2.0, "gone": 5.0})
    assert _keys(boosted) == ["b-0", "a-0"]
    assert boosted[0]["score"] == round(2 / 62, 6) and boosted[1]["score"] == round(1 / 61, 6)
    assert _keys(fuse(ranked, 2, boost={})) == _keys(fuse(ranked, 2)) == ["a-0", "b-0"]


def test_of_two_places_one_session_takes_one_while_another_has_a_hit() -> None:
    """Half of two places is one: the session's second item counts half
    from there, below the other session's item."""
    ranked = {"keyword": [item("a", 0), item("a", 1), item("b", 0)]}
    assert [r["session_id"] for r in fuse(ranked, limit=2)] == ["a", "b"]
    # Three places: two are a's at full score.
    three = fuse(ranked, limit=3)
    assert _keys(three) == ["a-0", "a-1", "b-0"]
    assert three[1]["score"] == round(1 / 62, 6)


def test_past_half_the_places_each_further_item_of_a_session_counts_half_again() -> None:
    ranked = {"keyword": [item("a", n) for n in range(7)]}
    fused = fuse(ranked, limit=10)
    assert [r["score"] for r in fused] == [
        *(round(1 / (61 + n), 6) for n in range(5)),
        round(0.5 / 66, 6),
        round(0.25 / 67, 6),
    ]


def test_items_of_no_session_are_never_scaled_down() -> None:
    """Memories saved outside any session belong to none: neither the
    session share nor the spread of the last places applies to them."""
    ranked = {"memories": [(f"m{n}", {"session_id": None}) for n in range(12)]}
    fused = fuse(ranked, limit=10)
    assert _keys(fused) == [f"m{n}" for n in range(10)]
    assert [r["score"] for r in fused] == [round(1 / (61 + n), 6) for n in range(10)]


def test_the_last_fifth_of_the_places_goes_to_sessions_not_shown_yet() -> None:
    """Ten places: from the ninth on, a session already shown counts half
    per item it has placed, so two sessions not shown yet take the ninth
    and tenth places from better-ranked second items."""
    firsts = [item(s, 0) for s in "abcdefgh"]
    ranked = {"keyword": [*firsts, item("a", 1), item("b", 1), item("i", 0), item("j", 0)]}
    fused = fuse(ranked, limit=10)
    assert _keys(fused) == [f"{s}-0" for s in "abcdefghij"]
    assert fused[8]["score"] == round(1 / 71, 6)  # not scaled: a new session
    # With eight places the ninth is never reached: second items come in rank order.
    assert _keys(fuse(ranked, limit=9))[8] == "i-0"


def test_equal_scores_go_newest_first_and_undated_last() -> None:
    undated = ("u", {"session_id": "a"})
    dated = ("d", {"session_id": "b", "timestamp": "2020-01-01T00:00:00Z"})
    fused = fuse({"keyword": [undated], "memories": [dated]}, limit=2)
    assert _keys(fused) == ["d", "u"]


def test_fewer_items_than_places_are_all_given() -> None:
    ranked = {"keyword": [item("a", 0), item("b", 0)]}
    assert _keys(fuse(ranked, limit=10)) == ["a-0", "b-0"]
    assert _keys(fuse(ranked, limit=1)) == ["a-0"]
