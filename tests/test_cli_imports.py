"""The read commands stay light: they never load pydantic, typer or the
reconciliation pipeline (what keeps them fast: bench/bench_cli.py).

pydantic alone costs several times the interpreter's start-up, so the read
commands print plain records (``sessions_graph.records``); ``reconcile
--pending`` with nothing waiting loads nothing of the pipeline. ``-X
importtime`` lists every module the real process loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.settings import Settings

HEAVY = ("pydantic", "typer", "click", "rich", "asyncio", "sessions_graph.models")


def env_for(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SESSIONS_GRAPH_", "MEMGRAPH_"))
    }
    env.update(
        SESSIONS_GRAPH_DB=str(tmp_path / "cli.db"),
        SESSIONS_GRAPH_USER_ID="alice",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    return env


def loaded(env: dict[str, str], *args: str) -> tuple[str, set[str]]:
    """The command's output and every module it imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sessions_graph", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    return result.stdout, modules


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A session with actions, entities (the local extractor), a memory and
    an interaction, all of alice's, and nothing left to reconcile."""
    tmp_path = tmp_path_factory.mktemp("store")
    env = env_for(tmp_path)
    with SessionsGraph(settings=Settings(db=env["SESSIONS_GRAPH_DB"])) as graph:
        graph.setup()
        graph.record_session_start("s-1", user_id="alice", cwd="/src/app")
        graph.record_actions(
            "s-1",
            [
                {"action_id": "a1", "action_type": "user_message", "text": "Fix app/cache.py"},
                {
                    "action_id": "a2",
                    "action_type": "tool_call",
                    "text": "pytest",
                    "tool_use_id": "t",
                },
                {
                    "action_id": "a3",
                    "action_type": "tool_result",
                    "text": "1 failed",
                    "tool_use_id": "t",
                    "is_error": True,
                },
            ],
            user_id="alice",
        )
        graph.save_memory("alice", "The cache lives in app/cache.py", session_id="s-1")
        graph.record_session_end("s-1")
        graph.recall("alice", "cache", session_id="s-1")  # an interaction
    swept = subprocess.run(
        [sys.executable, "-m", "sessions_graph", "reconcile", "--pending", "--extractor", "local"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert swept.returncode == 0, swept.stderr
    return env


@pytest.mark.parametrize(
    "args",
    [
        ("sessions", "--json"),
        ("sessions", "--entity", "app/cache.py", "--json"),
        ("show", "s-1", "--json"),
        ("entities", "--session", "s-1", "--json"),
        ("memory", "list", "--json"),
        ("memory", "search", "cache", "--json"),
        ("interactions", "--json"),
    ],
    ids=" ".join,
)
def test_read_commands_print_records_without_pydantic(
    store: dict[str, str], args: tuple[str, ...]
) -> None:
    output, modules = loaded(store, *args)

    assert json.loads(output)  # it found what the store holds
    assert not {m for m in modules if m.startswith(HEAVY)}


def test_status_loads_no_pydantic(store: dict[str, str]) -> None:
    output, modules = loaded(store, "status", "--json")

    assert json.loads(output)["counts"]["sessions"] == 1
    assert not {m for m in modules if m.startswith(HEAVY)}
    # Nor what only writing the install state needs: dataclasses (inspect),
    # secrets (hmac, OpenSSL's hashes), tempfile.
    assert not modules & {"dataclasses", "inspect", "secrets", "tempfile"}


def test_a_sweep_with_nothing_waiting_loads_nothing_of_the_pipeline(store: dict[str, str]) -> None:
    output, modules = loaded(store, "reconcile", "--pending")

    assert output.strip() == "nothing to reconcile"
    assert not {m for m in modules if m.startswith((*HEAVY, "sessions_graph.reconcile"))}
