"""The Memory API contract, run on every engine."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_graph import InvalidQueryError, MemoryValidationError, SessionsGraph
from sessions_graph.validation import MAX_CONTENT_BYTES


def test_save_then_read_back(graph: SessionsGraph) -> None:
    mem = graph.save_memory(
        user_id="alice", content="Prefers Python over TypeScript", session_id="s-abc123"
    )
    assert mem.user_id == "alice" and mem.session_id == "s-abc123"
    assert mem.created_at == mem.updated_at and mem.created_at.endswith("+00:00")
    assert graph.get_memory(mem.memory_id) == mem
    assert graph.get_memories("alice") == [mem]
    assert graph.get_memories_for_session("s-abc123") == [mem]
    session = graph.get_session("s-abc123")
    assert session is not None and session.user_id == "alice"


def test_memories_come_newest_first(graph: SessionsGraph) -> None:
    ids = [graph.save_memory("alice", f"fact number {i}").memory_id for i in range(5)]
    assert [m.memory_id for m in graph.get_memories("alice")] == ids[::-1]
    assert [m.memory_id for m in graph.get_memories("alice", limit=2)] == ids[:2:-1][:2]


def test_session_memories_newest_first_and_only_that_session(graph: SessionsGraph) -> None:
    first = graph.save_memory("alice", "uses ruff", session_id="s-1")
    second = graph.save_memory("alice", "uses pytest", session_id="s-1")
    graph.save_memory("alice", "uses black", session_id="s-2")
    assert graph.get_memories_for_session("s-1") == [second, first]


def test_search_ranks_by_relevance(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "Likes hiking in the mountains")
    strong = graph.save_memory("alice", "Python Python Python: writes all tooling in Python")
    weak = graph.save_memory("alice", "Knows some Python and a lot of Rust and Go and Java and C")
    found = graph.search_memories("alice", "python", limit=10)
    assert [m.memory_id for m in found] == [strong.memory_id, weak.memory_id]
    assert found[0].score is not None and found[0].score >= found[1].score  # type: ignore[operator]


def test_search_query_language(graph: SessionsGraph) -> None:
    py = graph.save_memory("alice", "Prefers Python over TypeScript")
    rust = graph.save_memory("alice", "Writes the engine in Rust")
    both = graph.save_memory("alice", "Python bindings for the Rust engine")

    def ids(query: str) -> set[str]:
        return {m.memory_id for m in graph.search_memories("alice", query)}

    assert ids("python") == {py.memory_id, both.memory_id}
    assert ids("python rust") == {py.memory_id, rust.memory_id, both.memory_id}
    assert ids("python OR rust") == {py.memory_id, rust.memory_id, both.memory_id}
    assert ids("python AND rust") == {both.memory_id}
    assert ids("python NOT rust") == {py.memory_id}
    assert ids("rust AND NOT python") == {rust.memory_id}
    assert ids('"rust engine"') == {both.memory_id}
    assert ids('"engine in rust"') == {rust.memory_id}
    assert ids("pyth*") == {py.memory_id, both.memory_id}
    assert ids("(typescript OR bindings) AND python") == {py.memory_id, both.memory_id}
    assert ids("PYTHON") == ids("python")
    assert ids("haskell") == set()


def test_a_prefix_query_puts_the_best_match_first(graph: SessionsGraph) -> None:
    """Prefix queries are ranked as any other: the memory that matches more
    of the query comes before the one that matches less, whichever is newer."""
    most = graph.save_memory("alice", "pytest runs pyright and pylint on the python code")
    least = graph.save_memory("alice", "python is installed")
    found = [m.memory_id for m in graph.search_memories("alice", "py*")]
    assert found == [most.memory_id, least.memory_id]


def test_a_term_matches_whole_tokens_only(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "Rules2024 were updated")
    assert graph.search_memories("alice", "Rules") == []
    assert len(graph.search_memories("alice", "rules2024")) == 1


@pytest.mark.parametrize(
    "query",
    [
        "content:python",
        "python^2",
        "pyth~1",
        "[a TO b]",
        '"unclosed',
        "(python",
        "python)",
        "(",
        "cache (",
        "docker AND (",
        "a OR (",
        "NOT python",
        "python AND",
        "OR python",
        "+python",
        "-python",
        "py*thon",
        "",
        "   ",
        "!!!",
    ],
)
def test_malformed_queries_raise_invalid_query(graph: SessionsGraph, query: str) -> None:
    graph.save_memory("alice", "Prefers Python")
    with pytest.raises(InvalidQueryError):
        graph.search_memories("alice", query)


#: Pieces queries are made of, syntax included, so that random sequences of
#: them reach every corner of the parser (an unclosed parenthesis at the end
#: raised IndexError).
_QUERY_PIECES = [
    "(",
    ")",
    '"',
    "*",
    "AND",
    "OR",
    "NOT",
    "python",
    "cache",
    "py*",
    "+",
    "-",
    ":",
    "^2",
    "~",
    "[",
    "]",
    "東京",
    "!!",
    " ",
]


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # searches only read
)
@given(
    st.one_of(
        st.text(max_size=40),
        st.lists(st.sampled_from(_QUERY_PIECES), max_size=12).map(" ".join),
        st.lists(st.sampled_from(_QUERY_PIECES), max_size=12).map("".join),
    )
)
def test_any_query_gives_results_or_invalid_query(graph: SessionsGraph, query: str) -> None:
    """Whatever a user types, the answer is a list of their memories or
    ``InvalidQueryError``: never another exception."""
    if not graph.get_memories("alice"):
        graph.save_memory("alice", "Prefers Python and the cache layer")
    try:
        found = graph.search_memories("alice", query)
    except InvalidQueryError:
        return
    assert all(m.user_id == "alice" for m in found)


def test_fts_syntax_in_user_text_is_only_text(graph: SessionsGraph) -> None:
    mem = graph.save_memory("alice", "NEAR the column filter content")
    # FTS5 operators and column filters arrive as plain words, never as syntax.
    assert [m.memory_id for m in graph.search_memories("alice", '"NEAR(content"')] == []
    assert [m.memory_id for m in graph.search_memories("alice", "near")] == [mem.memory_id]


def test_users_are_isolated(graph: SessionsGraph) -> None:
    a = graph.save_memory("alice", "Prefers Python for data tooling")
    b = graph.save_memory("bob", "Prefers Python for data tooling too")
    assert graph.get_memories("alice") == [a]
    assert graph.get_memories("bob") == [b]
    assert [m.memory_id for m in graph.search_memories("alice", "python data")] == [a.memory_id]
    assert [m.memory_id for m in graph.search_memories("bob", "python data")] == [b.memory_id]
    assert graph.search_memories("carol", "python") == []
    assert graph.get_memory(a.memory_id, user_id="bob") is None


def test_update_and_delete_are_scoped_to_the_owner(graph: SessionsGraph) -> None:
    mem = graph.save_memory("alice", "Prefers Python")
    assert graph.update_memory(mem.memory_id, "hacked", user_id="bob") is None
    assert graph.delete_memory(mem.memory_id, user_id="bob") is False
    assert graph.get_memory(mem.memory_id) == mem

    updated = graph.update_memory(mem.memory_id, "Prefers Python, especially for data tooling")
    assert updated is not None and updated.content.endswith("data tooling")
    assert updated.created_at == mem.created_at and updated.updated_at > mem.updated_at
    assert [m.memory_id for m in graph.search_memories("alice", "tooling")] == [mem.memory_id]
    assert graph.search_memories("alice", "hacked") == []

    assert graph.delete_memory(mem.memory_id, user_id="alice") is True
    assert graph.get_memories("alice") == []
    assert graph.search_memories("alice", "python") == []
    assert graph.delete_memory(mem.memory_id) is False
    assert graph.update_memory(mem.memory_id, "gone") is None


def test_a_memory_cannot_join_another_users_session(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "in my session", session_id="s-alice")
    with pytest.raises(MemoryValidationError):
        graph.save_memory("bob", "sneaking in", session_id="s-alice")
    assert graph.get_memories("bob") == []
    assert [m.user_id for m in graph.get_memories_for_session("s-alice")] == ["alice"]


BAD_IDS = [
    "",
    " ",
    "a b",
    "x" * 129,
    "-leading",
    "tab\there",
    "nul\x00",
    "new\nline",
    "'; DROP TABLE memories; --",
    "}) DETACH DELETE n //",
    "é",
    None,
    42,
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_invalid_ids_are_rejected_and_nothing_changes(graph: SessionsGraph, bad: object) -> None:
    mem = graph.save_memory("alice", "keep me")
    before = graph.status()["counts"]
    with pytest.raises(MemoryValidationError):
        graph.save_memory(bad, "content")  # type: ignore[arg-type]
    if bad is not None:  # None is a valid session_id: "no session"
        with pytest.raises(MemoryValidationError):
            graph.save_memory("alice", "content", session_id=bad)  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.update_memory(bad, "content")  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.delete_memory(bad)  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.get_memories(bad)  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.search_memories(bad, "keep")  # type: ignore[arg-type]
    assert graph.status()["counts"] == before
    assert graph.get_memories("alice") == [mem]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   \n\t ",
        "x" * (MAX_CONTENT_BYTES + 1),
        "é" * (MAX_CONTENT_BYTES // 2 + 1),
        "bell\x07",
        "nul\x00byte",
        "lone \ud800 surrogate",
        None,
        7,
    ],
)
def test_invalid_content_is_rejected(graph: SessionsGraph, content: object) -> None:
    mem = graph.save_memory("alice", "original")
    with pytest.raises(MemoryValidationError):
        graph.save_memory("alice", content)  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.update_memory(mem.memory_id, content)  # type: ignore[arg-type]
    assert graph.get_memories("alice") == [mem]


def test_content_at_the_size_limit_is_accepted(graph: SessionsGraph) -> None:
    content = "word " * (MAX_CONTENT_BYTES // 5)
    mem = graph.save_memory("alice", content)
    assert graph.get_memory(mem.memory_id).content == content  # type: ignore[union-attr]


@pytest.mark.parametrize("limit", [0, -1, 10_001, "10", True])
def test_invalid_limits_are_rejected(graph: SessionsGraph, limit: object) -> None:
    with pytest.raises(MemoryValidationError):
        graph.get_memories("alice", limit=limit)  # type: ignore[arg-type]
    with pytest.raises(MemoryValidationError):
        graph.search_memories("alice", "x", limit=limit)  # type: ignore[arg-type]


def test_unicode_text_round_trips_and_is_searchable(graph: SessionsGraph) -> None:
    mem = graph.save_memory("alice", "Spricht Deutsch: Größe, Übung; 日本語 too 🙂")
    assert graph.get_memory(mem.memory_id).content == mem.content  # type: ignore[union-attr]
    assert [m.memory_id for m in graph.search_memories("alice", "größe")] == [mem.memory_id]


def test_setup_is_idempotent_and_keeps_data(graph: SessionsGraph) -> None:
    mem = graph.save_memory("alice", "survives setup")
    graph.setup()
    graph.setup()
    assert graph.get_memories("alice") == [mem]


def test_status_reports_engine_and_counts(graph: SessionsGraph, engine_name: str) -> None:
    graph.save_memory("alice", "one", session_id="s-1")
    info = graph.status()
    assert info["engine"] == engine_name.removesuffix("-on-falkordb")
    assert info["schema_version"] >= 1
    assert info["counts"]["memories"] == 1
    assert info["counts"]["sessions"] == 1


def test_drop_removes_schema_and_data_and_setup_starts_afresh(graph: SessionsGraph) -> None:
    graph.save_memory("alice", "temporary", session_id="s-1")
    graph.record_actions("s-1", [{"action_id": "a-1", "action_type": "user_message", "text": "hi"}])
    graph.drop()
    assert graph.status()["schema_version"] == 0
    graph.setup()
    assert set(graph.status()["counts"].values()) == {0}
    assert graph.get_memories("alice") == []
    assert graph.get_session("s-1") is None
    graph.save_memory("alice", "fresh")
    assert [m.content for m in graph.search_memories("alice", "fresh")] == ["fresh"]


def test_equally_relevant_memories_come_newest_first(graph: SessionsGraph) -> None:
    ids = [graph.save_memory("alice", "uses ruff for linting").memory_id for _ in range(3)]
    found = graph.search_memories("alice", "ruff")
    assert [m.memory_id for m in found] == ids[::-1]
    assert len({m.score for m in found}) == 1


def test_cjk_memories_are_searchable(graph: SessionsGraph) -> None:
    sushi = graph.save_memory("alice", "我喜欢东京的寿司")
    seoul = graph.save_memory("alice", "서울에서 회의를 했습니다 with the Tokyo team")
    graph.save_memory("bob", "东京 寿司 东京")

    def ids(query: str) -> set[str]:
        return {m.memory_id for m in graph.search_memories("alice", query)}

    assert ids("东京") == {sushi.memory_id}
    assert ids("寿司") == {sushi.memory_id}
    assert ids("我喜欢东京的寿司") == {sushi.memory_id}  # the whole memory as a query
    assert ids("京都") == set()  # characters in another order are another word
    assert ids("서울") == {seoul.memory_id}
    assert ids("东京 OR 서울") == {sushi.memory_id, seoul.memory_id}
    assert ids("tokyo AND 서울") == {seoul.memory_id}
    assert ids("东京 NOT 寿司") == set()
    assert graph.search_memories("alice", "东京")[0].score is not None


def test_tokens_over_forty_characters_are_searchable(graph: SessionsGraph) -> None:
    token = "f3a9c2" * 10  # 60 characters: a digest
    digest = graph.save_memory("alice", f"release artifact digest {token}")
    graph.save_memory("alice", "release notes")
    assert [m.memory_id for m in graph.search_memories("alice", token)] == [digest.memory_id]
    found = graph.search_memories("alice", f"{token.upper()} AND release")
    assert [m.memory_id for m in found] == [digest.memory_id]
