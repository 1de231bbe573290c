"""The hook path stays light: no heavy module is imported on the embedded engine.

Each forbidden module costs tens of milliseconds to import, and the hook runs
on every agent event; ``-X importtime`` lists every module the real process
loads, so the check covers ``__main__`` dispatch as the agent runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload

FORBIDDEN = (
    "pydantic",
    "typer",
    "click",
    "rich",
    "neo4j",
    "lightrag",
    "openai",
    "anthropic",
    "numpy",
    "spacy",
    "thinc",
    "tenacity",
    "sessions_graph.models",
    "sessions_graph.cli",
    "sessions_graph.reconcile",
    "logging",
)


#: Standard-library modules a capture-only event has no use for, each several
#: milliseconds of a hook's start-up: ``dataclasses`` (it imports ``inspect``,
#: ``ast``, ``dis``...), the TOML parser without a config file, ``uuid``,
#: and ``hashlib`` when no action id is derived.
CAPTURE_NEVER_LOADS = frozenset({"dataclasses", "inspect", "tomllib", "uuid", "hashlib"})

#: What the injecting events may load from the list above: nothing (the
#: secret redactor, pure ``re``, is ``sessions_graph.redact``, outside
#: reconciliation, and the capture path loads it too).
INJECTION_MAY_LOAD: frozenset[str] = frozenset()


def imported_modules(payload: str, env: dict[str, str], *, output: bool = False) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sessions_graph", "hook"],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0
    if output:
        assert '"additionalContext"' in result.stdout  # the injection path ran
    else:
        assert result.stdout == ""
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":
                modules.add(name)
    assert "sessions_graph.hooks.runner" in modules  # the parse worked
    return modules


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


@pytest.mark.parametrize("store_up", [True, False], ids=["store up", "store down (spool)"])
def test_hook_imports_nothing_heavy(tmp_path: Path, store_up: bool) -> None:
    db = tmp_path / "h.db"
    if not store_up:
        (tmp_path / "file").write_text("")
        db = tmp_path / "file" / "h.db"
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(db)}
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s-1")
    t.user("hello")
    t.tool_use("Bash", {"command": "ls"}, "a b")
    t.assistant("done")
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        modules = imported_modules(claude_payload(event, "s-1", t.path, prompt="hello"), env)
        assert _heavy(modules) == [], event
        if store_up:
            assert "sessions_graph.engines.sqlite" in modules
        assert "sessions_graph.engines.memgraph" not in modules
        if event in ("Stop", "SessionEnd"):
            # Capture only: not even the standard library's heavier modules.
            assert not CAPTURE_NEVER_LOADS & modules, (event, CAPTURE_NEVER_LOADS & modules)


def test_injecting_context_imports_nothing_heavy(tmp_path: Path) -> None:
    """SessionStart and UserPromptSubmit read the store and answer with
    context (the ledger row, the prompt's interaction, recall's exchanges):
    still no pydantic, typer, LLM client or reconciliation pipeline, nor
    the standard library's heavier modules."""
    from sessions_graph.graph import SessionsGraph

    db = tmp_path / "h.db"
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(db), "SESSIONS_GRAPH_USER_ID": "alice"}
    graph = SessionsGraph(db=str(db), user_id="alice")
    graph.record_session_start(
        "s-0", user_id="alice", cwd="/home/dev/project", project_key="project"
    )
    graph.record_actions(
        "s-0",
        [
            {"action_id": "e1", "action_type": "user_message", "text": "Use SQLite for the cache"},
            {"action_id": "e2", "action_type": "assistant_message", "text": "Done: SQLite."},
        ],
    )
    graph.close()
    # The prompt in a session of its own: what SessionStart showed is not
    # injected again in its session.
    for event, session in (("SessionStart", "s-1"), ("UserPromptSubmit", "s-2")):
        modules = imported_modules(
            claude_payload(event, session, None, prompt="SQLite for the cache?"),
            env,
            output=True,
        )
        assert _heavy(modules) == [], event
        # A prompt sent without a transcript derives its action id (``hashlib``).
        derives = {"hashlib"} if event == "UserPromptSubmit" else set()
        assert (CAPTURE_NEVER_LOADS - INJECTION_MAY_LOAD - derives) & modules == set(), event
        assert "sessions_graph.hooks.inject" in modules


def test_replaying_the_spool_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    down = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "file" / "h.db")}
    imported_modules(claude_payload("UserPromptSubmit", "s-1", None, prompt="hi"), down)
    up = {**os.environ, "SESSIONS_GRAPH_DB": str(tmp_path / "h.db")}
    modules = imported_modules(claude_payload("Stop", "s-1", None), up)
    assert "sessions_graph.hooks.spool" in modules
    assert _heavy(modules) == []


def test_a_memgraph_hook_loads_the_driver_but_not_its_optional_extras(tmp_path: Path) -> None:
    """Memgraph configured but down (a closed loopback port): the event is
    spooled, and the driver's optional numpy / pandas / pyarrow stay unloaded."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "MEMGRAPH_URL": f"bolt://127.0.0.1:{port}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    modules = imported_modules(claude_payload("SessionStart", "s-1", None), env)
    assert "neo4j" in modules and "sessions_graph.engines.memgraph" in modules
    driver_needs = ("neo4j", "tenacity", "logging")
    hidden = {"numpy", "pandas", "pyarrow"}  # listed as a bare lookup, never loaded
    assert [m for m in _heavy(modules) if not m.startswith(driver_needs) and m not in hidden] == []
    assert not [m for m in modules if m.startswith(("numpy.", "pandas.", "pyarrow."))]
    assert list((tmp_path / "state" / "sessions-graph" / "spool").glob("*.json"))
