"""The lanes of recall (``recall.lanes``) on the embedded engine: the dates a
question names and the searches they cost, whose turn a named speaker's
question is about, entity names, memories under a project."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import action_key
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.recall import lanes
from sessions_graph.recall.core import recall
from sessions_graph.recall.lanes import entity_names, searched_windows


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(engine=SQLiteEngine(tmp_path / "s.db"))
    try:
        yield g
    finally:
        g.close()


def turn(graph: SessionsGraph, session_id: str, text: str, timestamp: str | None = None) -> None:
    """alice's session ``session_id`` of one user message ``<session_id>-0``."""
    graph.record_session_start(session_id, user_id="alice")
    action = {"action_id": f"{session_id}-0", "action_type": "user_message", "text": text}
    graph.record_actions(session_id, [{**action, "timestamp": timestamp}])


def hits(graph: SessionsGraph, query: str, **options: Any) -> list[dict[str, Any]]:
    return recall(graph.engine, "alice", query, **options)["hits"]


def dated(found: list[dict[str, Any]]) -> list[str]:
    """The turns the dates lane found."""
    return [h["action_id"] for h in found if "dates" in h["lanes"]]


def day(date: str) -> str:
    return f"{date}T00:00:00.000000+00:00"


def test_windows_that_touch_or_overlap_are_searched_as_one() -> None:
    first = (day("2023-10-12"), day("2023-10-17"))
    touching = (day("2023-10-17"), day("2023-10-22"))
    inside = (day("2023-10-13"), day("2023-10-14"))
    later = (day("2023-10-20"), day("2023-10-25"))
    apart = (day("2024-01-01"), day("2024-01-05"))
    assert searched_windows([first, touching], 4) == [(day("2023-10-12"), day("2023-10-22"))]
    assert searched_windows([first, inside], 4) == [first]
    # In the order the question names them, each merged window once.
    assert searched_windows([apart, later, first, touching], 4) == [
        apart,
        (day("2023-10-12"), day("2023-10-25")),
    ]


def test_the_windows_named_first_are_searched_and_no_more_than_asked() -> None:
    named = [(day(f"2023-0{m}-01"), day(f"2023-0{m}-05")) for m in range(1, 8)]
    assert searched_windows(named[::-1], 3) == named[::-1][:3]
    assert searched_windows(named, 7) == named


def _counted(graph: SessionsGraph) -> list[object]:
    searches: list[object] = []
    search = graph.engine.search_turns

    def counted(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        searches.append(args)
        return search(*args, **kwargs)

    graph.engine.search_turns = counted  # type: ignore[method-assign]
    return searches


def test_a_question_naming_many_dates_costs_three_windows(graph: SessionsGraph) -> None:
    """docs/recall.md: at most three windows, the dates named first, each
    searched twice (said in it, telling of it); a month named without its
    year costs one search more."""
    turn(graph, "s-1", "the ledger deploy failed", "2024-03-01T10:00:00Z")
    turn(graph, "s-2", "the ledger deploy failed", "2024-06-01T10:00:00Z")
    dates = " ".join(f"2024-0{m}-01" for m in range(3, 9))
    searches = _counted(graph)
    found = lanes.dates(graph.engine, _request(f"ledger deploy on {dates}"))
    assert len(searches) == 6 and [r["action_id"] for r in found] == ["s-1-0"]
    said = [args[3] for args in searches]
    assert [(f["since"], f["told"]) for f in said[:2]] == [
        ("2024-02-29T00:00:00.000000+00:00", None),
        (None, ("2024-02-29T00:00:00.000000+00:00", "2024-03-05T00:00:00.000000+00:00")),
    ]
    searches.clear()
    lanes.dates(graph.engine, _request(f"ledger deploy on {dates} or in June"))
    assert len(searches) == 7


def _request(question: str, **options: Any) -> Any:
    from sessions_graph.recall.request import check_request

    return check_request("alice", question, **options)


def test_a_named_day_is_searched_within_the_callers_own_bounds(graph: SessionsGraph) -> None:
    turn(graph, "s-edge", "showed the new painting", "2023-10-12T00:00:00Z")
    turn(graph, "s-mid", "showed the old painting", "2023-10-14T12:00:00Z")
    question = "what painting was shown on October 13, 2023?"
    assert sorted(dated(hits(graph, question))) == ["s-edge-0", "s-mid-0"]
    assert dated(hits(graph, question, since="2023-10-13T00:00:00Z")) == ["s-mid-0"]
    # The caller's bound meets the window at one instant, which holds a turn.
    assert dated(hits(graph, question, until="2023-10-12T00:00:00Z")) == ["s-edge-0"]
    assert hits(graph, question, since="2023-10-20T00:00:00Z") == []


def test_the_dates_lane_searches_the_questions_other_words(graph: SessionsGraph) -> None:
    """Within a named window, a turn that only shares the date's words
    ("2023") with the question is no match."""
    turn(graph, "s-1", "showed the new painting", "2023-10-13T12:00:00Z")
    turn(graph, "s-2", "the 2023 budget review of october", "2023-10-13T13:00:00Z")
    found = hits(graph, "what painting was shown on October 13, 2023?")
    assert dated(found) == ["s-1-0"]


def test_a_month_without_its_year_passes_over_undated_turns(graph: SessionsGraph) -> None:
    turn(graph, "s-1", "we went camping by the lake")
    turn(graph, "s-2", "we went camping in the hills", "2023-06-10T12:00:00Z")
    found = hits(graph, "When did we go camping in June?")
    assert dated(found) == ["s-2-0"]
    assert {h["action_id"] for h in found} == {"s-1-0", "s-2-0"}


def test_the_first_person_named_is_the_subject_never_a_stop_word_or_two_letters(
    graph: SessionsGraph,
) -> None:
    """ "Will" is a stop word and "Al" too short to be taken for a name: the
    question is about Tim's turn though the other speaks of the garden more."""
    turn(graph, "s-tim", "Tim: the garden needs water.")
    turn(graph, "s-will", "Will: the garden, the garden, it needs water.")
    turn(graph, "s-al", "Al: the garden, the garden, it needs water!")
    first = hits(graph, "What did Will tell Tim about the garden water?", scope="turns")
    assert first[0]["action_id"] == "s-tim-0"
    first = hits(graph, "What did Al tell Tim about the garden water?", scope="turns")
    assert first[0]["action_id"] == "s-tim-0"


def test_entity_names_are_runs_of_up_to_four_words_joined_as_names_are_written() -> None:
    assert entity_names("node js") == [
        "node",
        "js",
        "node js",
        "node-js",
        "node_js",
        "node.js",
        "nodejs",
    ]
    keys = entity_names("alpha beta gamma delta epsilon")
    assert [k for k in keys if " " not in k and "-" not in k and "_" not in k][:5] == [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
    ]
    assert {"alpha beta gamma delta", "beta.gamma.delta.epsilon"} <= set(keys)
    assert "alpha beta gamma delta epsilon" not in keys and len(keys) == 5 + 5 * (4 + 3 + 2)
    # A stop word alone names nothing; in a longer name it counts.
    keys = entity_names("the redis")
    assert keys == ["redis", "the redis", "the-redis", "the_redis", "the.redis", "theredis"]
    assert entity_names("the") == []


def test_memories_match_any_word_of_the_question(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "alpha release notes")
    graph.save_memory("alice", "beta release notes")
    graph.save_memory("alice", "gamma release notes")
    found = {h["text"] for h in hits(graph, "alpha beta", scope="memories")}
    assert found == {"alpha release notes", "beta release notes"}


def test_a_memory_is_in_the_project_it_was_saved_in(graph: SessionsGraph) -> None:
    graph.record_session_start("s-app", user_id="alice", cwd="/src/app")
    graph.save_memory("alice", "orion note of the app", session_id="s-app")
    graph.save_memory("alice", "orion note saved there too", session_id="s-app")
    graph.save_memory("alice", "orion note of the api", project_key="github.com/acme/api")
    # A session whose project became known after its memory was saved.
    graph.record_session_start("s-web", user_id="alice")
    graph.save_memory("alice", "orion note of the web", session_id="s-web")
    graph.record_session_start("s-web", user_id="alice", project_key="github.com/acme/web")

    def found(project: str) -> set[str]:
        return {h["text"] for h in hits(graph, "orion note", scope="memories", project=project)}

    app = {"orion note of the app", "orion note saved there too"}
    assert found("/src/app") == found("/src") == app
    assert found("github.com/acme/api") == {"orion note of the api"}
    assert found("github.com/acme/web") == {"orion note of the web"}
    assert found("/src/other") == set()
    # A session's directory is read once per recall, and only for a project.
    reads: list[str] = []
    get_session = graph.engine.get_session

    def counted(session_id: str) -> Any:
        reads.append(session_id)
        return get_session(session_id)

    graph.engine.get_session = counted  # type: ignore[method-assign]
    assert found("/src/app") == app and sorted(reads) == ["s-app", "s-web"]
    reads.clear()
    assert len(hits(graph, "orion note", scope="memories")) == 4 and reads == []


def test_an_entity_leads_to_at_most_100_of_its_mentions(graph: SessionsGraph) -> None:
    """docs/recall.md: a name mentioned everywhere costs what a rare one does."""
    engine = graph.engine
    for n in range(101):
        session = f"s-{n:03d}"
        turn(
            graph, session, f"kestrel queue note {n}", f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z"
        )
        key = action_key("alice", f"{session}-0")
        engine.set_unit_chunks("action", key, f"c{n}", [{"hash": f"h{n}", "text": "t"}])
        engine.save_extraction(f"h{n}", "base", [{"name": "Kestrel"}], [])
    [entity] = hits(graph, "kestrel", scope="entities")
    assert len(entity["sessions"]) == 100 and entity["sessions"][0] == "s-100"
