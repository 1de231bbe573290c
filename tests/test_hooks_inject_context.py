"""What the hook injects, built in-process on the embedded store (the
functions the hook process calls, without its process): where the user left
off at SessionStart, the past that bears on a prompt at UserPromptSubmit, what
each line holds and in what order, the budget, and the injection ledger that
keeps an item from being injected twice in a session."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.actions import make_action
from sessions_graph.hooks.block import NOTICE, TAG
from sessions_graph.hooks.inject import (
    above_floor,
    context_for,
    prompt_context,
    session_start_context,
    topic_words,
)
from sessions_graph.settings import Settings

FOOTER = "More: the `mcp__sessions-graph__recall` tool"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A git project, "orion"."""
    root = tmp_path / "orion"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def vega(tmp_path: Path) -> Path:
    """Another git project, "vega"."""
    other = tmp_path / "vega"
    (other / ".git").mkdir(parents=True)
    return other


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SessionsGraph]:
    settings = Settings(
        db=str(tmp_path / "x.db"),
        state_dir=str(tmp_path / "state"),
        user_id="alice",
        inject_session_start_tokens=1500,
        inject_prompt_tokens=800,
    )
    g = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    yield g
    g.close()


def record(
    graph: SessionsGraph,
    sid: str,
    cwd: Path | None,
    turns: list[tuple[str, str | None]],
    day: int = 1,
    user: str = "alice",
) -> None:
    """A past session of ``turns`` (request, answer or None), on day ``day``."""
    graph.record_session_start(
        sid,
        user_id=user,
        cwd=str(cwd) if cwd else None,
        project_key=str(cwd) if cwd else None,
        started_at=f"2026-11-{day:02d}T10:00:00Z",
    )
    actions = []
    for n, (request, answer) in enumerate(turns):
        stamp = f"2026-11-{day:02d}T10:{n:02d}:"
        actions.append(make_action(f"{sid}-u{n}", "user_message", request, stamp + "00Z"))
        if answer is not None:
            actions.append(make_action(f"{sid}-a{n}", "assistant_message", answer, stamp + "30Z"))
    graph.record_actions_report(sid, actions, user_id=user)


def now(graph: SessionsGraph, cwd: Path | None, sid: str = "now") -> None:
    """The session the hook speaks to, just started."""
    graph.record_session_start(
        sid, user_id="alice", cwd=str(cwd) if cwd else None, project_key=str(cwd) if cwd else None
    )


def start(
    graph: SessionsGraph, cwd: Path | None, budget: int = 1500, injected: frozenset = frozenset()
) -> tuple[str, list[str]] | None:
    payload = {"session_id": "now", **({"cwd": str(cwd)} if cwd else {})}
    return session_start_context(graph, payload, "alice", budget, injected)


def ask(
    graph: SessionsGraph,
    cwd: Path | None,
    prompt: Any,
    budget: int = 800,
    injected: frozenset = frozenset(),
    projects: str = "labelled",
) -> tuple[str, list[str]] | None:
    payload = {"session_id": "now", "prompt": prompt, **({"cwd": str(cwd)} if cwd else {})}
    return prompt_context(graph, payload, "alice", budget, injected, projects=projects)


def body(context: str) -> list[str]:
    """The block's lines between its header and its footer."""
    lines = context.splitlines()
    assert lines[0].startswith(f"<{TAG} ") and lines[-1] == f"</{TAG}>"
    return [line for line in lines[1:-1] if not line.startswith(FOOTER)]


def items_of(context: str) -> list[str]:
    return [line for line in body(context) if line.startswith("- ")]


def quoted(line: str) -> str:
    """The quoted text that ends a line."""
    return json.loads(line[line.index(' "') + 1 :])


# -- where the user left off ---------------------------------------------------------


def test_where_you_left_off_shows_sessions_of_substance_newest_first(
    graph: SessionsGraph, root: Path
) -> None:
    record(graph, "s1", root, [("Add a retry to the upload client", "Added a retry.")], day=1)
    record(graph, "s2", root, [("hello", "Hi!")], day=2)  # no substance
    record(graph, "s3", root, [("Move the cache to redis", "We'll use Redis for the cache.")], 3)
    record(graph, "now", root, [("Fix the upload retry", None)], day=5)  # this session
    context, items = start(graph, root)
    assert context.splitlines()[0] == f'<{TAG} kind="where-you-left-off"> {NOTICE}'
    assert body(context) == [
        'Where this user left off in project "orion" (most recent first):',
        '- 2026-11-03 10:00 UTC, session s3: goal "Move the cache to redis";'
        ' decided "We\'ll use Redis for the cache."',
        '- 2026-11-01 10:00 UTC, session s1: goal "Add a retry to the upload client";'
        ' last answer "Added a retry."',
    ]
    # A decision stands for the answer it is in: each turn once in the ledger.
    assert items == ["turn:s3-u0", "turn:s3-a0", "turn:s1-u0", "turn:s1-a0"]


def _sessions_shown(context: str | None) -> list[str]:
    return re.findall(r"session (\S+): goal", context or "")


def test_at_most_three_sessions_are_shown(graph: SessionsGraph, root: Path) -> None:
    for day in range(1, 6):
        record(graph, f"s{day}", root, [(f"Refactor the parser of module {day}", None)], day)
    now(graph, root)
    assert _sessions_shown(start(graph, root)[0]) == ["s5", "s4", "s3"]


@pytest.mark.parametrize(("small_talk", "shown"), [(8, ["s0"]), (9, [])])
def test_the_ten_newest_sessions_are_looked_at(
    graph: SessionsGraph, root: Path, small_talk: int, shown: list[str]
) -> None:
    """The newest ten sessions (this one counted) are read for the ones with
    substance: one behind more small talk than that is not looked for."""
    record(graph, "s0", root, [("Port the billing report to SQL", None)], day=1)
    for n in range(small_talk):
        record(graph, f"chat{n}", root, [("hello", "Hi!")], day=2 + n)
    now(graph, root)
    found = start(graph, root)
    assert _sessions_shown(found[0] if found else None) == shown


def test_a_digest_is_built_when_missing_or_behind_and_kept_when_current(
    graph: SessionsGraph, root: Path
) -> None:
    record(graph, "s1", root, [("hello", "Hi!")], day=1)
    now(graph, root)
    assert start(graph, root) is None  # small talk only
    built = graph.session_digest("s1")["built_at"]
    assert start(graph, root) is None
    assert graph.session_digest("s1")["built_at"] == built  # current: not rebuilt
    graph.record_actions_report(
        "s1", [make_action("s1-u9", "user_message", "Now split the upload client", None)]
    )
    assert _sessions_shown(start(graph, root)[0]) == ["s1"]  # behind: built again


def test_nothing_to_say_is_none(graph: SessionsGraph, root: Path) -> None:
    now(graph, root)
    assert start(graph, root) is None
    graph.save_memory("alice", "deploys go through the staging cluster first")
    context, items = start(graph, root)
    assert body(context) == [
        "Memories this user saved that may matter here:",
        f'- ({_when_now(graph)}) "deploys go through the staging cluster first"',
    ]
    assert items == [f"memory:{graph.engine.list_memories('alice', 5)[0]['memory_id']}"]


def _when_now(graph: SessionsGraph) -> str:
    stamp = graph.engine.list_memories("alice", 5)[0]["created_at"]
    return f"{stamp[:10]} {stamp[11:16]} UTC"


def test_without_a_cwd_it_is_any_project(graph: SessionsGraph) -> None:
    record(graph, "s1", None, [("Add a retry to the upload client", None)], day=1)
    now(graph, None)
    assert body(start(graph, None)[0])[0] == (
        "Where this user left off in any project (most recent first):"
    )


def test_the_memories_of_this_project_and_of_none_best_first_five_at_most(
    graph: SessionsGraph, root: Path, vega: Path
) -> None:
    record(graph, "s1", root, [("hello", "Hi!"), ("Move the cache to redis", None)], day=1)
    record(graph, "v1", vega, [("Tune the vega queue", None)], day=2)
    ids = {}
    ids["redis"] = graph.save_memory("alice", "redis runs with allkeys-lru", "s1").memory_id
    for n in range(5):
        ids[n] = graph.save_memory("alice", f"note {n} of the team", "s1").memory_id
    ids["none"] = graph.save_memory("alice", "write commit messages in English").memory_id
    graph.save_memory("alice", "vega keeps its own redis notes", "v1")  # another project's
    now(graph, root)
    context, items = start(graph, root)
    memories = [line for line in items_of(context) if line.startswith("- (")]
    assert len(memories) == 5
    # The one that shares the goal's words first, then the newest.
    assert quoted(memories[0]) == "redis runs with allkeys-lru"
    assert [quoted(m) for m in memories[1:]] == [
        "write commit messages in English",
        "note 4 of the team",
        "note 3 of the team",
        "note 2 of the team",
    ]
    assert memories[0].startswith(f"- ({_stamp(graph, ids['redis'])}, session s1) ")
    assert memories[1].startswith(f"- ({_stamp(graph, ids['none'])}) ")
    assert "vega" not in context
    # What was injected already is not shown again.
    again, _ = start(graph, root, injected=frozenset(items))
    assert [quoted(m) for m in items_of(again)] == ["note 1 of the team"]


def _stamp(graph: SessionsGraph, memory_id: str) -> str:
    stamp = graph.engine.get_memory(memory_id)["created_at"]
    return f"{stamp[:10]} {stamp[11:16]} UTC"


def test_a_session_whose_line_was_injected_is_not_repeated(
    graph: SessionsGraph, root: Path
) -> None:
    record(graph, "s1", root, [("Add a retry to the upload client", "Added a retry.")], day=1)
    record(graph, "s3", root, [("Move the cache to redis", "We'll use Redis for the cache.")], 3)
    now(graph, root)
    # Exactly what s3's line shows: s3 goes, s1 stays.
    shown = frozenset({"turn:s3-u0", "turn:s3-a0"})
    assert _sessions_shown(start(graph, root, injected=shown)[0]) == ["s1"]
    # Part of it: the line still says something new.
    assert _sessions_shown(start(graph, root, injected=frozenset({"turn:s3-u0"}))[0]) == [
        "s3",
        "s1",
    ]
    assert start(graph, root, injected=shown | {"turn:s1-u0", "turn:s1-a0"}) is None


def test_a_long_request_and_answer_are_quoted_at_300_characters(
    graph: SessionsGraph, root: Path
) -> None:
    request = "Rewrite the upload client " + "so that it retries " * 30
    answer = "I rewrote it " + "and it retries now " * 30
    record(graph, "s1", root, [(request, answer)], day=1)
    now(graph, root)
    (line,) = items_of(start(graph, root, budget=4000)[0])
    goal, last = line.split("; last answer ")
    assert len(quoted(goal)) == 300 and quoted(goal).startswith("Rewrite the upload client")
    assert len(json.loads(last)) == 300 and json.loads(last).startswith("I rewrote it")


# -- context_for: which event, which budget, the ledger ------------------------------


def _event(event: str, session_id: str = "now", cwd: Path | None = None, **extra: Any) -> dict:
    return {"hook_event_name": event, "session_id": session_id, "cwd": str(cwd), **extra}


def test_session_start_context_is_noted_in_the_ledger(graph: SessionsGraph, root: Path) -> None:
    record(graph, "s1", root, [("Add a retry to the upload client", "Added a retry.")], day=1)
    now(graph, root)
    context = context_for(graph, graph.settings, _event("SessionStart", cwd=root), "alice")
    assert _sessions_shown(context) == ["s1"] and NOTICE in context
    assert graph.injected_items("alice", "now") == {"turn:s1-u0", "turn:s1-a0"}
    # Said once: a second start of the session has nothing new to say.
    assert context_for(graph, graph.settings, _event("SessionStart", cwd=root), "alice") is None


def test_the_notice_is_said_in_a_sessions_first_block_only(
    graph: SessionsGraph, root: Path
) -> None:
    record(graph, "s1", root, [("Why does the kafka consumer lag behind", None)], day=1)
    record(graph, "s2", root, [("The kafka consumer lag comes from the batch size", None)], 2)
    now(graph, root)
    first = context_for(
        graph,
        graph.settings,
        _event("UserPromptSubmit", cwd=root, prompt="kafka consumer lag"),
        "alice",
    )
    assert NOTICE in first.splitlines()[0] and FOOTER in first
    graph.record_actions_report(
        "s1", [make_action("s1-u5", "user_message", "kafka lag consumer again", None)]
    )
    later = context_for(
        graph,
        graph.settings,
        _event("UserPromptSubmit", cwd=root, prompt="kafka consumer lag"),
        "alice",
    )
    assert later is not None and NOTICE not in later and FOOTER not in later
    assert later.splitlines()[0] == f'<{TAG} kind="relevant-past">'
    # A start (a compaction, a clear) says it again.
    record(graph, "s3", root, [("Port the billing report to SQL", None)], day=3)
    again = context_for(graph, graph.settings, _event("SessionStart", cwd=root), "alice")
    assert NOTICE in again and FOOTER in again


def test_only_session_start_and_prompts_inject(graph: SessionsGraph, root: Path) -> None:
    record(graph, "s1", root, [("Add a retry to the upload client", "Added a retry.")], day=1)
    now(graph, root)
    for event in ("Stop", "SessionEnd", "PreCompact", "Notification"):
        assert context_for(graph, graph.settings, _event(event, cwd=root), "alice") is None
    no_session = {"hook_event_name": "SessionStart", "cwd": str(root)}
    assert context_for(graph, graph.settings, no_session, "alice") is None
    assert graph.injected_items("alice", "now") == set()


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit"])
def test_a_budget_of_zero_turns_injection_off(
    tmp_path: Path, graph: SessionsGraph, root: Path, event: str
) -> None:
    """Off: nothing is looked up (no digest built on the way), nothing noted."""
    record(graph, "s1", root, [("Add a retry to the upload client", "Added a retry.")], day=1)
    now(graph, root)
    off = Settings(
        db=graph.settings.db,
        state_dir=graph.settings.state_dir,
        inject_session_start_tokens=0,
        inject_prompt_tokens=0,
    )
    payload = _event(event, cwd=root, prompt="upload client retry")
    assert context_for(graph, off, payload, "alice") is None
    assert graph.engine.get_digest("s1") is None
    assert graph.injected_items("alice", "now") == set()
    assert context_for(graph, graph.settings, payload, "alice") is not None


# -- the relevant past at a prompt ------------------------------------------------------


def test_a_prompt_gets_the_exchanges_and_memories_it_is_about(
    graph: SessionsGraph, root: Path
) -> None:
    record(
        graph,
        "s1",
        root,
        [("Why does the kafka consumer lag behind", "The lag comes from a slow batch size.")],
        day=1,
    )
    memory = graph.save_memory("alice", "kafka consumer lag: raise the batch size").memory_id
    record(graph, "s2", root, [("lunch plans for friday", "Pizza.")], day=2)
    now(graph, root)
    context, items = ask(graph, root, "kafka consumer lag?")
    assert context.splitlines()[0] == f'<{TAG} kind="relevant-past"> {NOTICE}'
    lines = items_of(context)
    assert (
        lines[0]
        == f'- ({_stamp(graph, memory)}, memory) "kafka consumer lag: raise the batch size"'
    )
    assert lines[1] == (
        '- (2026-11-01 10:00 UTC, session s1, turn) ">> user: Why does the kafka consumer lag'
        ' behind | >> assistant: The lag comes from a slow batch size."'
    )
    assert len(lines) == 2 and items == [f"memory:{memory}", "turn:s1-u0", "turn:s1-a0"]
    # The interaction records the prompt with what was shown.
    (interaction,) = graph.interactions("alice", "now", plain=True)
    assert interaction["question"] == "kafka consumer lag?"
    assert [c["id"] for c in interaction["context"]] == [memory, "s1-u0"]  # one per hit


@pytest.mark.parametrize("prompt", ["thanks, go on", "", "ok do it", None, 42])
def test_a_prompt_without_a_topic_injects_nothing(
    graph: SessionsGraph, root: Path, prompt: Any
) -> None:
    record(graph, "s1", root, [("thanks go on ok do it", "Sure.")], day=1)
    now(graph, root)
    assert ask(graph, root, prompt) is None


def test_this_sessions_own_turns_and_memories_are_not_injected(
    graph: SessionsGraph, root: Path
) -> None:
    """Other sessions only: what this session said or saved is in its
    context already."""
    record(graph, "now", root, [("Why does the kafka consumer lag behind", "Batch size.")], 1)
    graph.save_memory("alice", "kafka consumer lag: raise the batch size", "now")
    assert ask(graph, root, "kafka consumer lag") is None


def test_at_most_eight_hits_are_shown(graph: SessionsGraph, root: Path) -> None:
    for n in range(10):
        record(graph, f"s{n}", root, [(f"kafka consumer lag report number {n}", None)], n + 1)
    now(graph, root)
    assert len(items_of(ask(graph, root, "kafka consumer lag", budget=5000)[0])) == 8


def test_the_prompt_is_read_to_its_500th_character(graph: SessionsGraph, root: Path) -> None:
    record(graph, "s1", root, [("the api gateway returns 502", None)], day=1)
    now(graph, root)
    filler = "ok " * 165 + "  "  # 497 characters of no topic
    assert ask(graph, root, filler + "api") is not None
    assert ask(graph, root, filler + "apix") is not None  # cut at 500: "api"
    assert ask(graph, root, filler + "api" + "x" * 50) is not None
    assert ask(graph, root, filler + " api") is None  # past the 500th


def test_each_hit_is_quoted_at_400_200_or_100_characters(graph: SessionsGraph, root: Path) -> None:
    request = "kafka consumer lag " + "grows whenever the batch gets larger " * 20
    record(graph, "s1", root, [(request, None)], day=1)
    now(graph, root)
    lengths = set()
    for budget in range(250, 20, -3):
        found = ask(graph, root, "kafka consumer lag", budget=budget)
        if found is not None:
            (line,) = items_of(found[0])
            lengths.add(len(quoted(line)))
            assert len(found[0]) <= budget * 4
    assert lengths == {400, 200, 100}


def test_another_projects_hit_is_labelled_and_held_to_a_higher_floor(
    graph: SessionsGraph, root: Path, vega: Path
) -> None:
    """``labelled``: another project's hit must hold 3 of the prompt's topic
    words and 60% of them; ``all``: the usual floor; ``this``: none. This
    project's hits come first."""
    record(graph, "v1", vega, [("kafka consumer lag grows on staging", None)], day=3)
    record(graph, "v2", vega, [("kafka consumer restarts", None)], day=4)
    record(graph, "o1", root, [("kafka consumer offsets reset", None)], day=1)
    now(graph, root)
    prompt = "kafka consumer lag staging metrics"  # 5 topic words; v1 holds 4, v2 2, o1 2
    labelled = items_of(ask(graph, root, prompt)[0])
    assert [_session_of(line) for line in labelled] == ["o1", "v1"]
    assert ', project "vega", turn)' in labelled[1] and ", project" not in labelled[0]
    everything = items_of(ask(graph, root, prompt, projects="all")[0])
    assert [_session_of(line) for line in everything] == ["o1", "v1", "v2"]
    only_here = items_of(ask(graph, root, prompt, projects="this")[0])
    assert [_session_of(line) for line in only_here] == ["o1"]


def _session_of(line: str) -> str:
    return re.search(r", session ([^,)]+)", line).group(1)


def test_another_projects_hit_at_exactly_the_higher_floor_is_shown(
    graph: SessionsGraph, root: Path, vega: Path
) -> None:
    record(graph, "v1", vega, [("kafka consumer lag", None)], day=3)  # 3 of 5: 60%
    record(graph, "v2", vega, [("kafka consumer", None)], day=4)  # 2 of 5
    now(graph, root)
    shown = ask(graph, root, "kafka consumer lag staging metrics")
    assert [_session_of(line) for line in items_of(shown[0])] == ["v1"]


def test_a_text_said_here_and_elsewhere_is_this_projects(
    graph: SessionsGraph, root: Path, vega: Path
) -> None:
    said = ("Pin the grpcio wheel to 1.62 for the arm64 build", None)
    record(graph, "here", root, [said], day=1)
    record(graph, "there", vega, [said], day=3)  # newer: it stands for both
    now(graph, root)
    (line,) = items_of(ask(graph, root, "grpcio wheel arm64 build pin", projects="this")[0])
    assert ", session here, turn, also in 1 session)" in line and "vega" not in line


def test_what_the_session_was_shown_is_left_out_of_an_exchange(
    graph: SessionsGraph, root: Path
) -> None:
    record(
        graph,
        "s1",
        root,
        [("Why does the kafka consumer lag behind", "The kafka lag comes from the batch size.")],
        day=1,
    )
    now(graph, root)
    context, items = ask(graph, root, "kafka consumer lag", injected=frozenset({"turn:s1-u0"}))
    (line,) = items_of(context)
    assert quoted(line) == ">> assistant: The kafka lag comes from the batch size."
    assert items == ["turn:s1-a0"]
    assert ask(graph, root, "kafka lag", injected=frozenset({"turn:s1-u0", "turn:s1-a0"})) is None


def test_a_memory_shown_already_is_left_out(graph: SessionsGraph, root: Path) -> None:
    memory = graph.save_memory("alice", "kafka consumer lag: raise the batch size").memory_id
    now(graph, root)
    assert ask(graph, root, "kafka consumer lag") is not None
    assert ask(graph, root, "kafka consumer lag", injected=frozenset({f"memory:{memory}"})) is None


def test_neighbouring_turns_are_shown_once(graph: SessionsGraph, root: Path) -> None:
    """Two requests in a row without a reply are each a hit with its
    neighbours: the second hit's own turn is in the first one's window, so it
    is not shown again; and a window the session was shown goes whole."""
    record(
        graph,
        "s1",
        root,
        [
            ("the kafka deploy pipeline broke on staging", None),
            ("the kafka deploy pipeline broke on staging again", None),
            ("lunch plans for friday", None),
        ],
        day=1,
    )
    now(graph, root)
    context, items = ask(graph, root, "kafka deploy pipeline staging")
    (line,) = items_of(context)
    assert quoted(line) == (
        ">> user: the kafka deploy pipeline broke on staging"
        " | user: the kafka deploy pipeline broke on staging again"
    )
    assert items == ["turn:s1-u0"]
    rest = ask(graph, root, "kafka deploy pipeline staging", injected=frozenset(items))
    (line,) = items_of(rest[0])
    assert quoted(line).startswith("user: the kafka deploy pipeline broke on staging | >> user:")
    assert rest[1] == ["turn:s1-u1"]


# -- the floor ----------------------------------------------------------------------


def test_topic_words_are_the_words_that_carry_a_topic() -> None:
    assert topic_words("Is the DB on k8s? x y ci, thanks! Go on: the DB") == ["db", "k8s", "ci"]
    assert topic_words("ok thanks, go on") == []


@pytest.mark.parametrize(
    ("words", "text", "shown"),
    [
        (["api"], "the api gateway", True),  # the same word
        (["api"], "the apis gateway", False),  # 3 letters: no stem shared
        (["node"], "two nodes", True),  # 4 letters: a stem
        (["nodes"], "one node", True),
        (["nodes"], "one nod", False),
        (["caches"], "the cache", True),
        (["deploy", "cache"], "deployed caches", True),
        ([], "anything at all", False),
        (["kafka", "lag"], "kafka only", False),  # 1 of 2
        (["kafka", "lag", "batch"], "kafka lag", True),  # 2 of 3
        (["kafka", "lag", "batch", "size", "staging", "metrics"], "kafka lag", False),  # 33%
    ],
)
def test_the_floor(words: list[str], text: str, shown: bool) -> None:
    assert above_floor(words, text) is shown


def test_the_floors_bounds_are_inclusive() -> None:
    words = ["kafka", "lag", "batch", "size", "staging"]
    assert above_floor(words, "kafka lag batch", 3, 0.6)  # 3 of 5: both bounds met exactly
    assert not above_floor(words, "kafka lag", 3, 0.4)
    assert not above_floor(words, "kafka lag batch", 4, 0.6)
    assert not above_floor(words, "kafka lag batch", 3, 0.61)
