"""The CLI under misuse: bounded options, one-line errors, per-user output,
missing stores. Real processes on real files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_process import run

from sessions_graph import SessionsGraph

TESTS = Path(__file__).parent


def env_for(tmp_path: Path, user: str = "alice", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSIONS_GRAPH_")}
    env.update(
        PYTHONPATH=str(TESTS),
        SESSIONS_GRAPH_DB=str(tmp_path / "cli.db"),
        SESSIONS_GRAPH_USER_ID=user,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    env.update(extra)
    return env


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("nosuch",),
        ("memory", "list", "--bogus"),
        ("memory", "list", "--limit", "many"),
        ("memory", "add"),
        ("memory", "delete", "a", "b", "c"),
        ("reconcile", "--lease", "soon"),
        ("status", "--json", "extra"),
    ],
)
def test_usage_errors_are_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = run(env_for(tmp_path), *args)
    one_error_line(result)
    assert result.returncode == 2 and result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ("reconcile", "--pending", "--lease", "inf"),
        ("reconcile", "--pending", "--lease", "1e308"),
        ("reconcile", "--pending", "--lease", "nan"),
        ("reconcile", "--pending", "--lease", "0"),
        ("reconcile", "--pending", "--concurrency", "0"),
        ("reconcile", "--pending", "--concurrency", "100000"),
        ("reconcile", "--pending", "--limit", "0"),
        ("memory", "list", "--limit", "10000000"),
        ("memory", "search", "x", "--limit", "-1"),
    ],
)
def test_numeric_options_are_bounded(tmp_path: Path, args: tuple[str, ...]) -> None:
    with SessionsGraph(db=str(tmp_path / "cli.db")) as graph:
        graph.record_actions(
            "s-1",
            [{"action_id": "a", "action_type": "user_message", "text": "Hi"}],
            user_id="alice",
        )
        graph.record_session_end("s-1")
    env = env_for(tmp_path, SESSIONS_GRAPH_LLM_FUNC="reconcile_scripted:slow_llm")
    result = run(env, *args)
    one_error_line(result)
    with SessionsGraph(db=str(tmp_path / "cli.db")) as graph:
        assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]


# -- per-user output ------------------------------------------------------------


def seed_two_users(db: Path) -> None:
    with SessionsGraph(db=str(db)) as graph:
        for user, sid in (("alice", "s-alice-1"), ("bob", "s-bob-1")):
            graph.record_actions(
                sid,
                [{"action_id": f"{sid}-a", "action_type": "user_message", "text": f"{user} ships"}],
                user_id=user,
            )
            graph.save_memory(user, f"{user} likes Orion", session_id=sid)
            graph.record_session_end(sid)


def test_a_sweep_shows_other_users_only_as_totals(tmp_path: Path) -> None:
    seed_two_users(tmp_path / "cli.db")
    env = env_for(tmp_path, user="carol", SESSIONS_GRAPH_LLM_FUNC="reconcile_scripted:slow_llm")

    result = run(env, "reconcile", "--pending", "--json")

    assert result.returncode == 0, result.stderr
    assert "s-alice-1" not in result.stdout and "s-bob-1" not in result.stdout
    report = json.loads(result.stdout)
    assert report["user_id"] == "carol" and report["sessions"] == []
    assert report["totals"]["sessions"] == report["totals"]["reconciled"] == 2
    assert report["totals"]["llm_calls"] >= 2


def test_a_sweep_shows_the_acting_users_own_sessions(tmp_path: Path) -> None:
    seed_two_users(tmp_path / "cli.db")
    env = env_for(tmp_path, user="alice", SESSIONS_GRAPH_LLM_FUNC="reconcile_scripted:slow_llm")

    result = run(env, "reconcile", "--pending")

    assert result.returncode == 0, result.stderr
    assert "s-alice-1" in result.stdout and "s-bob-1" not in result.stdout
    assert "2 sessions" in result.stdout.splitlines()[-1]


def test_status_counts_the_acting_users_data_only(tmp_path: Path) -> None:
    seed_two_users(tmp_path / "cli.db")

    carol = json.loads(run(env_for(tmp_path, user="carol"), "status", "--json").stdout)
    alice = json.loads(
        run(env_for(tmp_path, user="carol"), "status", "--json", "-u", "alice").stdout
    )
    text = run(env_for(tmp_path, user="carol"), "status").stdout

    assert carol["user_id"] == "carol"
    assert carol["counts"] == {
        "sessions": 0,
        "actions": 0,
        "memories": 0,
        "chunks": 0,
        "entities": 0,
    }
    assert "users" not in carol["counts"] and "users:" not in text
    assert alice["counts"]["sessions"] == alice["counts"]["actions"] == 1
    assert alice["counts"]["memories"] == 1


# -- missing stores, --db, the state directory ---------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("status", "--json"),
        ("memory", "list"),
        ("memory", "list", "--json"),
        ("memory", "search", "orion"),
        ("sessions", "--entity", "Orion"),
        ("config", "get", "db"),
    ],
)
def test_read_commands_create_nothing_for_a_missing_database(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    missing = tmp_path / "nowhere" / "x.db"
    result = run(env_for(tmp_path), "--db", str(missing), *args)
    assert result.returncode == 0, result.stderr
    assert not missing.parent.exists()
    if "--json" in args:
        json.loads(result.stdout)
    elif args[0] == "config":
        assert result.stdout.strip() == str(missing)
    else:
        assert "no database" in result.stdout + result.stderr


def test_entities_of_a_session_in_a_missing_database_is_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "x.db"
    result = run(env_for(tmp_path), "--db", str(missing), "entities", "--session", "s-1")
    assert "not found" in one_error_line(result)
    assert not missing.parent.exists()


def test_demo_keeps_its_database_only_where_asked(tmp_path: Path) -> None:
    kept = tmp_path / "kept.db"
    with_db = run(env_for(tmp_path), "--db", str(kept), "demo")
    temporary = run(env_for(tmp_path), "demo")

    assert with_db.returncode == 0 and temporary.returncode == 0, with_db.stderr
    assert kept.exists() and str(kept) in with_db.stdout
    with SessionsGraph(db=str(kept)) as graph:
        assert graph.status()["counts"]["sessions"] == 1  # the demo's, in the file asked for
    assert "demo.db" not in temporary.stdout and "sessions-graph-demo" not in temporary.stdout


def test_an_empty_state_dir_setting_means_the_default(tmp_path: Path) -> None:
    agent_cwd = tmp_path / "project"
    agent_cwd.mkdir()
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    env = env_for(tmp_path, SESSIONS_GRAPH_STATE_DIR="", SESSIONS_GRAPH_DB=str(blocker / "x.db"))
    payload = json.dumps(
        {"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "hello"}
    )
    hook = run(env, "hook", cwd=agent_cwd, stdin=payload)
    assert hook.returncode == 0 and "spooled" in hook.stderr
    assert list(agent_cwd.iterdir()) == []
    assert list((tmp_path / "state" / "sessions-graph" / "spool").glob("*.json"))
    shown = run(env, "config", "get", "state_dir", cwd=agent_cwd).stdout.strip()
    assert shown == str(tmp_path / "state" / "sessions-graph")


def test_reconcile_without_an_llm_still_replays_the_spool(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    down = env_for(tmp_path, SESSIONS_GRAPH_DB=str(blocker / "x.db"))
    payload = json.dumps(
        {"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "typed offline"}
    )
    run(down, "hook", stdin=payload)
    assert list((tmp_path / "state" / "sessions-graph" / "spool").glob("*.json"))

    # The LLM extractor asked for, and no LLM configured: exit 2, after the replay.
    result = run(env_for(tmp_path, SESSIONS_GRAPH_EXTRACTOR="llm"), "reconcile", "--pending")

    assert result.returncode == 2 and "OPENAI_API_KEY" in one_error_line(result)
    assert not list((tmp_path / "state" / "sessions-graph" / "spool").glob("*.json"))
    with SessionsGraph(db=str(tmp_path / "cli.db")) as graph:
        assert [a.text for a in graph.get_actions("s-1")] == ["typed offline"]


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "args", [("status",), ("recall", "the parser"), ("memory", "list")], ids=str
)
def test_a_memgraph_routing_url_that_reaches_nothing_is_one_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    url = f"neo4j://127.0.0.1:{_closed_port()}"
    result = run(env_for(tmp_path, MEMGRAPH_URL=url), *args)
    line = one_error_line(result)  # the driver's own log lines never reach the screen
    assert f"cannot reach Memgraph at {url}" in line
