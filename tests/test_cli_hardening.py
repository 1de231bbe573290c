"""The CLI under misuse: bounded options, one-line errors, per-user output,
missing stores. Real processes on real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
        **extra,
    )
    return env


def run(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sessions_graph", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


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
