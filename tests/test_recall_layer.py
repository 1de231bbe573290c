"""The plain recall layer: dicts end to end, light imports, the embedded index."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.engines.sqlite.schema import (
    MIGRATIONS,
    _add_origin_functions,
    _add_recall_functions,
    _statements,
)
from sessions_graph.index_text.turns import asks, asks_when, only_asks, speaker, tells_time
from sessions_graph.index_text.words import index_text, query_terms
from sessions_graph.recall import fusion
from sessions_graph.recall.core import recall
from sessions_graph.recall.dates import named_months, named_windows
from sessions_graph.recall.render import render
from sessions_graph.recall.request import check_request

#: No recall filter (``Engine.search_turns``): what a plain question asks for.
FILTERS = check_request("alice", "anything").turn_filters()


def _turn(engine: SQLiteEngine, user_id: str, session_id: str, action_id: str, text: str) -> None:
    """Store one user message ``action_id`` in ``session_id``."""
    row = {
        "action_id": action_id,
        "action_type": "user_message",
        "text": text,
        "timestamp": None,
        "tool_name": None,
        "tool_use_id": None,
        "is_error": False,
    }
    engine.add_actions(session_id, user_id, [row])


def test_plain_layer_returns_dicts_and_renders_them(tmp_path: Path) -> None:
    engine = SQLiteEngine(tmp_path / "s.db")
    engine.start_session("s-1", "alice", "2026-01-01T00:00:00.000000+00:00", None, None)
    _turn(engine, "alice", "s-1", "a", "tune the gc pauses")
    result = recall(engine, "alice", "gc pauses", limit=5)
    assert type(result) is dict and type(result["hits"][0]) is dict
    assert result["hits"][0]["action_id"] == "a"
    assert "gc pauses" in render(result["hits"], 200, result["query"])


def test_plain_layer_does_not_import_pydantic(tmp_path: Path) -> None:
    """The hook process renders recall results; pydantic costs ~80 ms there."""
    script = textwrap.dedent(
        f"""
        import sys
        from sessions_graph.engines.sqlite import SQLiteEngine
        from sessions_graph.recall.core import recall
        from sessions_graph.recall.render import render
        engine = SQLiteEngine({str(tmp_path / "s.db")!r})
        print(render(recall(engine, "alice", "anything")["hits"], 100))
        heavy = ("pydantic", "typer", "sessions_graph.models", "neo4j")
        heavy = [m for m in heavy if m in sys.modules]
        assert not heavy, heavy
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _old_store(path: Path, version: int, texts: list[str], *, indexed: bool = False) -> None:
    """A store file at schema ``version`` holding one session of alice's with
    ``texts`` as its actions (``a0``, ``a1``, ...); ``indexed``: with turn
    documents as that version wrote them (own text, no context)."""
    conn = sqlite3.connect(path)
    _add_recall_functions(conn)
    _add_origin_functions(conn)
    for number, migration in enumerate(MIGRATIONS[:version]):
        for statement in _statements(migration):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number + 1}")
    conn.execute("INSERT INTO users VALUES ('alice', '2025-01-01')")
    conn.execute(
        "INSERT INTO sessions(session_id, user_id, started_at) VALUES ('s', 'alice', '2025')"
    )
    keyed = version >= 18  # action ids unique per user: rows carry their key
    for seq, text in enumerate(texts):
        conn.execute(
            "INSERT INTO actions(action_id, session_id, seq, action_type, text"
            f"{', action_key' if keyed else ''}) VALUES (?, 's', ?, 'user_message', ?"
            f"{', ?' if keyed else ''})",
            (f"a{seq}", seq, text, *([f"alice|a{seq}"] if keyed else [])),
        )
        if indexed and keyed:  # with the marks that version's indexer wrote
            conn.execute(
                "INSERT INTO turn_docs(rowid, action_id, action_key, user_id, session_id,"
                " action_type, speaker, asks, tells_time)"
                " VALUES (?, ?, ?, 'alice', 's', 'user_message', ?, ?, ?)",
                (seq + 1, f"a{seq}", f"alice|a{seq}", speaker(text), asks(text), tells_time(text)),
            )
        elif indexed:
            conn.execute(
                "INSERT INTO turn_docs(rowid, action_id, user_id, session_id, action_type)"
                " VALUES (?, ?, 'alice', 's', 'user_message')",
                (seq + 1, f"a{seq}"),
            )
        if indexed:
            conn.execute(
                "INSERT INTO turns_fts(rowid, body, context) VALUES (?, ?, '')", (seq + 1, text)
            )
    conn.commit()
    conn.close()


def test_actions_stored_before_the_turn_index_are_indexed_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_store(path, 3, ["old question about kafka", "the answer: use compaction"])
    engine = SQLiteEngine(path)
    hits = recall(engine, "alice", "kafka compaction")["hits"]
    assert {h["action_id"] for h in hits} == {"a0", "a1"}


def test_turns_indexed_before_speakers_get_them_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v9.db"
    texts = ["Maria: which kafka topic?", "Maria: the kafka topic is orders"]
    _old_store(path, 9, texts, indexed=True)
    rows = SQLiteEngine(path).search_turns("alice", [("kafka",)], 10, FILTERS)
    assert {(r["action_id"], r["speaker"], r["asks"]) for r in rows} == {
        ("a0", "maria", True),
        ("a1", "maria", False),
    }


def test_turns_indexed_before_time_cues_get_them_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v10.db"
    _old_store(path, 10, ["we moved kafka last week", "kafka stays"], indexed=True)
    rows = SQLiteEngine(path).search_turns("alice", [("kafka",)], 10, FILTERS)
    assert {(r["action_id"], r["tells_time"]) for r in rows} == {("a0", True), ("a1", False)}


def test_turns_indexed_before_only_asking_marks_get_them_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v18.db"
    texts = ["Maria: Wow! Which kafka topic?", "Maria: kafka runs on orders. Fine?", "kafka stays"]
    _old_store(path, 18, texts, indexed=True)
    rows = SQLiteEngine(path).search_turns("alice", [("kafka",)], 10, FILTERS)
    assert {(r["action_id"], r["asks"], r["only_asks"]) for r in rows} == {
        ("a0", True, True),
        ("a1", True, False),
        ("a2", False, False),
    }


def test_time_cues_and_questions_that_ask_when() -> None:
    assert tells_time("Tim: I met my teammates two weeks ago")
    assert tells_time("Deployed it on Friday.") and tells_time("last sprint went well")
    assert not tells_time("We picked Redis for the cache") and not tells_time("Yearly plans")
    assert asks_when("When did John meet his teammates?")
    assert asks_when("Remind me, when did we switch to Redis?")
    assert asks_when("What year did she move?") and asks_when("How long has he had the dog?")
    assert not asks_when("What did Evan do when it rained?")


def test_speaker_labels_and_asking_turns() -> None:
    assert speaker("Caroline: I went hiking") == "caroline"
    assert speaker("Dr. Mary Jones: the results are in") == "dr. mary jones"
    # Not labels: lowercase words, a URL, a colon without a space after it.
    assert speaker("fix: the cache") is None
    assert speaker("https://example.com is up") is None
    assert speaker("Caroline:hi") is None
    assert asks("Tim: Have you been to Universal Studios? [shared image: a castle]")
    assert asks('Did it say "timeout?"')
    assert not asks("What? No, we shipped it.")


def test_turns_that_only_ask() -> None:
    # Nothing told besides the questions but a word or two of greeting.
    assert only_asks("Tim: Congrats! How did it feel to seal the deal?")
    assert only_asks("Shall I run the tests too? [file: notes.md]")
    assert only_asks("Thanks, John! Which one? The red one?")
    # Told something first: an Asking Turn, but not one that only asks.
    assert asks("Caroline: Love that purple color! For walking or running?")
    assert not only_asks("Caroline: Love that purple color! For walking or running?")
    assert not only_asks("We moved the cache to Redis last week. Did it help?")
    assert not only_asks("What? No, we shipped it.")  # not an Asking Turn at all
    assert not only_asks("Why? " + "the build log says more " * 20 + "and then?")  # long


def test_a_turn_that_only_asks_ranks_below_one_that_tells(tmp_path: Path) -> None:
    """Two turns match a question the same way; the one that only asks holds
    nothing the question looks for, so the one that tells comes first, even
    though the other is newer (recency breaks ties)."""
    engine = SQLiteEngine(tmp_path / "s.db")
    engine.start_session("s-1", "alice", "2026-01-01T00:00:00.000000+00:00", None, None)
    engine.start_session("s-2", "alice", "2026-01-02T00:00:00.000000+00:00", None, None)
    _turn(engine, "alice", "s-1", "tells", "Tim: We did the kafka migration. Any questions?")
    _turn(engine, "alice", "s-2", "asks", "Tim: Hi! How did the kafka migration go?")
    hits = recall(engine, "alice", "kafka migration", limit=5)["hits"]
    assert [h["action_id"] for h in hits] == ["tells", "asks"]


def test_index_text_spaces_cjk_and_cuts_long_tokens() -> None:
    assert index_text("去东京吧 ok").split() == ["去", "东", "京", "吧", "ok"]
    long = "x" * 90
    assert index_text(f"id {long}") == "id " + " ".join(["x" * 39, "x" * 39, "x" * 12])


#: Tantivy drops a token of 40 UTF-8 bytes or more, at indexing and in queries.
TANTIVY_DROPS = 40


@pytest.mark.parametrize(
    "word",
    [
        "x" * 40,  # 40 bytes: dropped whole
        "ж" * 20,  # 20 letters, 40 bytes
        "é" * 25 + "a" * 3,
        "a" * 38 + "ж",  # one 2-byte letter past 38 ASCII ones
        "𝐀" * 12,  # 4-byte letters
    ],
)
def test_long_words_are_cut_into_pieces_tantivy_keeps(word: str) -> None:
    indexed = index_text(f"see {word} here").split()
    assert indexed[0] == "see" and indexed[-1] == "here"
    pieces = indexed[1:-1]
    assert "".join(pieces) == word and len(pieces) > 1
    assert all(len(p.encode()) < TANTIVY_DROPS for p in pieces)
    # The question cuts the word the same way, as one phrase of pieces.
    assert query_terms(word) == [tuple(p.lower() for p in pieces)]


def test_a_query_word_tantivy_would_drop_is_answered_locally() -> None:
    from sessions_graph.query import needs_local, parse

    assert needs_local(parse("ж" * 20)) and needs_local(parse("x" * 40))
    assert not needs_local(parse("x" * 39))


def test_turns_indexed_with_character_pieces_are_cut_again_on_upgrade(tmp_path: Path) -> None:
    """Turn documents written when long words were cut into 40-character
    pieces are rewritten, so that the question's byte-cut pieces find them."""
    path = tmp_path / "v11.db"
    word = "k" * 45
    _old_store(path, 11, [f"the key is {word}", "nothing here"], indexed=True)
    conn = sqlite3.connect(path)
    old_body = f"the key is {word[:40]} {word[40:]}"
    conn.execute("UPDATE turns_fts SET body = ? WHERE rowid = 1", (old_body,))
    conn.commit()
    conn.close()
    rows = SQLiteEngine(path).search_turns("alice", query_terms(word), 10, FILTERS)
    assert rows and rows[0]["action_id"] == "a0"  # (a1 holds it as its neighbour)


def test_query_terms_drop_stop_words_and_split_cjk_into_bigrams() -> None:
    assert query_terms("What did we pick for the cache?") == [("pick",), ("cache",)]
    assert query_terms("what is it") == [("what",), ("is",), ("it",)]
    assert query_terms("东京寿司") == [("东", "京"), ("京", "寿"), ("寿", "司")]
    assert query_terms("东 x") == [("东",), ("x",)]


def test_query_terms_add_the_other_irregular_forms_of_a_word() -> None:
    assert query_terms("When did she go camping?") == [
        ("go",),
        ("camping",),
        ("goes",),
        ("went",),
        ("gone",),
    ]
    # (then the compound forms: the cut "chil dren" no text holds, "childrenmet")
    assert query_terms("the children met")[:4] == [("children",), ("met",), ("child",), ("meet",)]
    assert query_terms("did") == [("did",)]  # a stop word left alone is not expanded


def test_query_terms_drop_words_that_only_frame_the_question() -> None:
    assert query_terms("What would Mel likely say about camping?") == [("mel",), ("camping",)]
    assert query_terms("likely") == [("likely",)]  # nothing else left: kept


def test_the_last_places_go_to_sessions_not_shown_yet() -> None:
    """Ranks 1-5 from session A, 6-13 from B, 14 from C: a session may fill
    half the list at full score, and from the fifth place before the end on
    a session already shown counts for less, so C gets a place B would have
    taken, while the head of the list keeps its order."""
    ranked = [(f"a{i}", {"session_id": "A"}) for i in range(5)]
    ranked += [(f"b{i}", {"session_id": "B"}) for i in range(8)]
    ranked += [("c0", {"session_id": "C"})]
    keys = [h["session_id"] for h in fusion.fuse({"keyword": ranked}, 10)]
    assert keys[:8] == ["A"] * 5 + ["B"] * 3
    assert "C" in keys


def test_named_dates_become_windows() -> None:
    windows, rest = named_windows("What did Mel paint on October 13, 2023 and in May 2022?")
    assert windows[0] == ("2023-10-12T00:00:00.000000+00:00", "2023-10-17T00:00:00.000000+00:00")
    assert windows[1] == ("2022-05-01T00:00:00.000000+00:00", "2022-06-01T00:00:00.000000+00:00")
    assert "2023" not in rest and "paint" in rest
    assert named_windows("February 31, 2023")[0] == []
    assert named_windows("we may go")[0] == []
    # A year of either century (a question holding neither names no date).
    assert named_windows("what broke in 1999?")[0] == [
        ("1999-01-01T00:00:00.000000+00:00", "2000-01-01T00:00:00.000000+00:00")
    ]
    # A comma and no space between day and year, as people type it.
    assert named_windows("the forest on December 1,2023")[0] == [
        ("2023-11-30T00:00:00.000000+00:00", "2023-12-05T00:00:00.000000+00:00")
    ]


def test_months_named_without_a_year() -> None:
    months, rest = named_months("What did Evan paint in October, and during May?")
    assert months == [10, 5] and "October" not in rest and "paint" in rest
    assert named_months("we may go in a bit")[0] == []  # "may" the verb is no month
    assert named_months("last June, early Jan. or mid-March")[0] == [6, 1, 3]
    request = check_request("alice", "When did we go camping in June?")
    assert request.months == (6,) and request.windows == ()
    assert ("june",) not in request.undated_terms and ("camping",) in request.undated_terms


def test_plain_json_matches_the_models(tmp_path: Path) -> None:
    import json

    from sessions_graph import SessionsGraph
    from sessions_graph.recall import to_json

    graph = SessionsGraph(engine=SQLiteEngine(tmp_path / "s.db"))
    graph.record_session_start("s-1", user_id="alice")
    graph.record_actions(
        "s-1", [{"action_id": "a", "action_type": "user_message", "text": "東京 gc pauses"}]
    )
    plain = recall(graph.engine, "alice", "gc pauses")
    assert json.loads(to_json(plain)) == json.loads(graph.recall("alice", "gc pauses").to_json())


def test_common_terms_are_left_out_when_others_remain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bm25 reads the whole document list of every phrase asked: a word in
    most turns must not make recall read the whole index."""
    from sessions_graph.engines.sqlite import recall as embedded

    monkeypatch.setattr(embedded, "COMMON_TURN_DOCS", 3)
    engine = SQLiteEngine(tmp_path / "s.db")
    engine.start_session("s", "alice", "2026-01-01T00:00:00.000000+00:00", None, None)
    texts = ["error " + "x" * i for i in range(12)] + ["error in the zeppelin", "zeppelin alone"]
    for i, text in enumerate(texts):  # apart, so no turn is another's context
        _turn(engine, "alice", f"s{i}", f"a{i}", text)
    found = engine.search_turns("alice", [("error",), ("zeppelin",)], 100, FILTERS)
    # Only rows with the rare word.
    assert sorted(r["action_id"] for r in found) == ["a12", "a13"]
    # Nothing but common words: the least common one selects.
    found = engine.search_turns("alice", [("error",)], 100, FILTERS)
    assert len(found) == 13


def test_common_terms_alone_are_anded_until_few_enough_rows_remain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing but common words: they are AND-ed, one at a time, until they
    select at most ``COMMON_TURN_DOCS`` rows (3 here). Counts stop at one
    more than that, so here every word counts 4 and they come in name order."""
    from sessions_graph.engines.sqlite import recall as embedded

    monkeypatch.setattr(embedded, "COMMON_TURN_DOCS", 3)
    engine = SQLiteEngine(tmp_path / "s.db")
    texts = {
        "t1": "alpha beta gamma",
        "t2": "alpha beta gamma",
        "t3": "alpha beta",
        "t4": "alpha",
        "t5": "alpha",
        "b1": "beta",
        "c1": "gamma",
        "c2": "gamma",
    }  # each word in 4 turns or more: all common
    for action_id, text in texts.items():  # apart, so no turn is another's context
        _turn(engine, "alice", f"s-{action_id}", action_id, text)

    found = engine.search_turns("alice", [("gamma",), ("beta",), ("alpha",)], 100, FILTERS)

    # alpha AND beta select 3 rows, few enough: gamma is not AND-ed too.
    assert sorted(r["action_id"] for r in found) == ["t1", "t2", "t3"]


def test_another_users_words_never_empty_a_users_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which words are common, and which matches are the newest, is counted
    over every user's turns: a busy user must not leave another with
    nothing when that user's own turns match."""
    from sessions_graph.engines.sqlite import recall as embedded

    monkeypatch.setattr(embedded, "COMMON_TURN_DOCS", 3)
    monkeypatch.setattr(embedded, "RANKED_TURN_DOCS", 2)
    engine = SQLiteEngine(tmp_path / "s.db")
    _turn(engine, "alice", "a-1", "alice-old", "deploy the zeppelin")
    for i in range(5):  # newer, and they make "deploy" common
        _turn(engine, "bob", f"b-{i}", f"bob-{i}", f"deploy {i} and the financial report")
    # "financial" is rare overall but only bob's: alice's common word is hers.
    found = engine.search_turns("alice", [("deploy",), ("financial",)], 100, FILTERS)
    assert [r["action_id"] for r in found] == ["alice-old"]
    # Only common words: ranked among alice's newest matches, not everyone's.
    found = engine.search_turns("alice", [("deploy",)], 100, FILTERS)
    assert [r["action_id"] for r in found] == ["alice-old"]
    assert len(engine.search_turns("bob", [("deploy",)], 100, FILTERS)) == 2


def test_a_question_of_many_dates_costs_a_bounded_number_of_searches(tmp_path: Path) -> None:
    """Each date a question names was one full search: 60 ISO dates in a
    question of 1,000 characters cost 60 searches. The dates lane searches
    the windows first named, merged where they overlap, and no more."""
    from sessions_graph.recall import lanes

    engine = SQLiteEngine(tmp_path / "s.db")
    engine.start_session("s", "alice", "2024-03-01T00:00:00+00:00", None, None)
    engine.add_actions(
        "s",
        "alice",
        [
            {
                "action_id": "a0",
                "action_type": "user_message",
                "text": "the deploy of the ledger failed",
                "timestamp": "2024-03-01T10:00:00+00:00",
            }
        ],
    )
    dates = " ".join(f"2024-{m:02d}-{d:02d}" for m in range(3, 8) for d in range(1, 25, 2))
    question = f"what failed on {dates} in the ledger deploy?"
    assert len(question) <= 1000
    req = check_request("alice", question)
    assert len(req.windows) == 60
    searches = []
    search = engine.search_turns

    def counted(*args: object, **kwargs: object) -> list:
        searches.append(args)
        return search(*args, **kwargs)  # type: ignore[arg-type]

    engine.search_turns = counted  # type: ignore[method-assign]
    rows = lanes.dates(engine, req)
    assert len(searches) == 2 * lanes.MAX_DATE_WINDOWS  # said in each window, telling of it
    assert [r["action_id"] for r in rows] == ["a0"]  # the first date named is searched
