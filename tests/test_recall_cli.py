"""``sessions-graph recall`` as scripts run it: real processes on a real store.

The command prints exactly what ``SessionsGraph.recall`` gives (``render`` /
``to_json``), for one user only, and every mistake is one line on stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript

from sessions_graph.graph import SessionsGraph

CLI = [sys.executable, "-m", "sessions_graph"]
QUESTION = "which database did we pick for the cache?"


@pytest.fixture
def graph(db: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(db=str(db))
    g.setup()
    _sessions(g)
    yield g
    g.close()


def _turns(graph: SessionsGraph, user: str, sid: str, cwd: str, day: str, texts: list[str]) -> None:
    graph.record_session_start(sid, user_id=user, cwd=cwd, started_at=f"{day}T09:00:00Z")
    kinds = ("user_message", "assistant_message")
    graph.record_actions(
        sid,
        [
            {
                "action_id": f"{sid}-{n}",
                "action_type": kinds[n % 2],
                "text": text,
                "timestamp": f"{day}T09:{n:02d}:00Z",
            }
            for n, text in enumerate(texts)
        ],
        user_id=user,
    )


def _sessions(graph: SessionsGraph) -> None:
    _turns(
        graph,
        "alice",
        "a-cache",
        "/src/shop",
        "2026-10-01",
        [
            "Which database should back the cache, Redis or Memcached?",
            "We picked Redis for the cache: it keeps the session data across restarts.",
            "Write that down in the design note.",
            "Done: docs/cache.md says Redis, with a 30 minute TTL.",
        ],
    )
    _turns(
        graph,
        "alice",
        "a-deploy",
        "/src/infra",
        "2026-11-10",
        [
            "How do we deploy the cache service to staging?",
            "Run make deploy-staging; the cache database migrates first.",
        ],
    )
    graph.save_memory("alice", "The cache database is Redis 7, chosen over Memcached")
    _turns(
        graph,
        "bob",
        "b-cache",
        "/src/shop",
        "2026-10-02",
        [
            "Which database did bob pick for the cache?",
            "Bob picked Cassandra for the cache database, secretly.",
        ],
    )


def recall(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "recall", *args], capture_output=True, text=True, timeout=60)


def test_text_output_is_the_rendered_recall(graph: SessionsGraph) -> None:
    result = recall(QUESTION)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    expected = graph.recall("alice", QUESTION).render(max_tokens=1500)
    assert result.stdout == expected + "\n"
    assert "We picked Redis for the cache" in result.stdout
    assert "Cassandra" not in result.stdout and "b-cache" not in result.stdout
    short = recall(QUESTION, "--max-tokens", "40", "--limit", "3")
    assert short.returncode == 0, short.stderr
    assert short.stdout == graph.recall("alice", QUESTION, limit=3).render(max_tokens=40) + "\n"
    assert len(short.stdout) < len(result.stdout)


def test_json_output_is_the_recall_result(graph: SessionsGraph) -> None:
    result = recall(QUESTION, "--json", "--limit", "5")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data == json.loads(graph.recall("alice", QUESTION, limit=5).to_json())
    assert data["user_id"] == "alice" and data["hits"]
    assert {hit["kind"] for hit in data["hits"]} <= {"turn", "memory", "entity"}
    assert all(hit.get("session_id") != "b-cache" for hit in data["hits"])


def test_another_user_gets_only_their_own(graph: SessionsGraph) -> None:
    result = recall(QUESTION, "--user", "bob", "--json")
    assert result.returncode == 0, result.stderr
    sessions = {hit.get("session_id") for hit in json.loads(result.stdout)["hits"]}
    assert sessions == {"b-cache"}
    assert "Redis" not in result.stdout


def test_filters_reach_the_recall(graph: SessionsGraph, tmp_path: Path) -> None:
    def sessions(*args: str) -> set[str | None]:
        result = recall("cache database", "--json", *args)
        assert result.returncode == 0, result.stderr
        return {hit.get("session_id") for hit in json.loads(result.stdout)["hits"]}

    assert {"a-cache", "a-deploy"} <= sessions()
    assert "a-deploy" not in sessions("--until", "2026-11-01")
    assert "a-cache" not in sessions("--since", "2026-11-01T00:00:00Z")
    assert sessions("--project", "/src/infra", "--scope", "turns") == {"a-deploy"}
    assert "a-cache" not in sessions("--session", "a-cache", "--scope", "turns")
    memories = recall("cache database", "--json", "--scope", "memories")
    kinds = {hit["kind"] for hit in json.loads(memories.stdout)["hits"]}
    assert kinds == {"memory"}
    both = recall("cache database", "--json", "--scope", "turns,memories")
    assert {hit["kind"] for hit in json.loads(both.stdout)["hits"]} == {"turn", "memory"}


def test_free_text_is_never_syntax(graph: SessionsGraph) -> None:
    result = recall('cache: "redis AND NOT (memcached* OR -bob')
    assert result.returncode == 0, result.stderr
    assert "Redis" in result.stdout


def test_with_the_global_db_the_same_light_command(
    graph: SessionsGraph, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = recall(QUESTION, "--limit", "4")
    monkeypatch.setenv("SESSIONS_GRAPH_DB", str(tmp_path / "elsewhere.db"))  # --db wins
    for flags in (["--db", str(db)], [f"--db={db}"], ["--db", "other.db", "--db", str(db)]):
        words = [*flags, "recall", QUESTION, "--limit", "4"]
        typed = subprocess.run(
            [sys.executable, "-X", "importtime", *CLI[1:], *words],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert typed.returncode == 0, typed.stderr
        assert typed.stdout == fast.stdout
        # Dispatched as `recall` is: the CLI's table and parser never load,
        # nor pydantic, typer, or dataclasses (which imports inspect).
        loaded = {line.rsplit("|", 1)[-1].strip() for line in typed.stderr.splitlines()}
        assert not loaded & {"sessions_graph.cli.parse", "pydantic", "typer", "dataclasses"}
    listed = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=60)
    assert "recall" in listed.stdout
    helped = recall("--help")
    assert helped.returncode == 0 and "--max-tokens" in helped.stdout


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["   "], 1, "query is empty"),
        (["x" * 1001], 1, "longer than"),
        (["cache", "--since", "last tuesday"], 1, "since"),
        (["cache", "--until", "2026-13-45"], 1, "until"),
        (["cache", "--limit", "0"], 1, "limit"),
        (["cache", "--limit", "101"], 1, "limit"),
        (["cache", "--scope", "everything"], 1, "scope"),
        (["cache", "--max-tokens", "0"], 1, "max_tokens"),
        (["cache", "--user", "no such user!"], 1, "user_id"),
        (["cache", "--session", "bad id;"], 1, "session_id"),
        (["cache", "--limit", "x"], 2, "--limit"),
        (["cache", "--frobnicate"], 2, "--frobnicate"),
        ([], 2, "QUERY"),
    ],
)
def test_bad_input_is_one_line(
    graph: SessionsGraph, args: list[str], code: int, words: str
) -> None:
    result = recall(*args)
    assert (result.returncode, result.stdout) == (code, "")
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("error: ") and words in result.stderr


def test_imported_history_is_recalled(db: Path, tmp_path: Path) -> None:
    """A new user's first minutes: import last month's sessions, then ask."""
    sid = "7d0c7f6e-5f3b-4a51-9b8e-0c2f4e6a8b10"
    t = ClaudeTranscript(tmp_path / "projects" / "-src-shop" / f"{sid}.jsonl", sid, cwd="/src/shop")
    t.user("Should the rate limiter use a token bucket or a sliding window?")
    t.tool_use("Bash", {"command": "rg -n ratelimit src/"}, "src/limits.py:12: WINDOW = 60")
    t.assistant("We went with a sliding window: bursts at the minute edge were the problem.")
    imported = subprocess.run(
        [*CLI, "import", str(tmp_path / "projects")], capture_output=True, text=True, timeout=60
    )
    assert imported.returncode == 0, imported.stderr
    result = recall("what did we choose for the rate limiter", "--json")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    assert hits and hits[0]["session_id"] == sid
    assert any("sliding window" in hit["text"] for hit in hits)
    assert hits[0]["timestamp"].startswith("2026-11-29T10:")  # the transcript's own time


def test_recall_loads_neither_typer_nor_pydantic(graph: SessionsGraph) -> None:
    """What keeps the command fast (bench/bench_cli.py): it is parsed before
    typer loads, and reads plain records, never pydantic models."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sessions_graph", "recall", QUESTION],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "sessions_graph.recall.core" in modules
    heavy = {m for m in modules if m.split(".")[0] in ("typer", "pydantic", "rich", "asyncio")}
    assert not heavy


def test_a_db_path_that_does_not_exist_is_not_created(tmp_path: Path, db: Path) -> None:
    # Recall only reads: a mistyped --db (or a fresh install) says nothing is
    # stored, like the other read commands, and leaves no file or directory.
    typo = tmp_path / "no-such-dir" / "x.db"
    for args in (["cache", "--db", str(typo)], ["cache", "--db", str(typo), "--json"]):
        result = recall(*args)
        assert result.returncode == 0, result.stderr
        assert "no database at" in result.stdout + result.stderr
        assert len(result.stderr.splitlines()) <= 1
    assert json.loads(recall("cache", "--db", str(typo), "--json").stdout)["hits"] == []
    assert not typo.parent.exists()
    bad = recall("   ", "--db", str(typo))
    assert bad.returncode == 1 and "query is empty" in bad.stderr  # still checked
    assert not db.exists()  # the configured store is not created either
    assert recall("cache").returncode == 0 and not db.exists()


def test_a_project_path_that_is_not_utf8_is_searched_not_a_crash(
    graph: SessionsGraph, tmp_path: Path
) -> None:
    # The OS hands such a name over with surrogate escapes; a session's cwd
    # is stored with U+FFFD in their place, and the filter compares the same.
    odd = os.fsencode(str(tmp_path)) + b"/caf\xe9"
    graph.record_session_start("s-odd", user_id="alice", cwd=os.fsdecode(odd))
    graph.record_actions(
        "s-odd",
        [{"action_id": "odd-1", "action_type": "user_message", "text": "the croissant cache"}],
        user_id="alice",
    )
    result = subprocess.run(
        [*CLI, "recall", "croissant", "--project", odd, "--json"],
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    assert [h["action_id"] for h in hits if h["kind"] == "turn"] == ["odd-1"]
