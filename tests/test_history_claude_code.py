"""History import against the real Claude Code CLI: its own transcripts, its
own hook calls. Claude Code runs offline against a scripted Messages API
(``fake_anthropic``), with our hooks installed in a scratch HOME; then
``sessions-graph import`` reads the transcripts it wrote.

Needs the CLI (``npm install @anthropic-ai/claude-code``): ``claude`` on PATH
or ``CLAUDE_BIN=/path/to/node_modules/.bin/claude``; skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from fake_anthropic import ANSWER, COMMAND, fake_messages_api

from sessions_graph.clock import parse_timestamp
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph

CLAUDE = os.environ.get("CLAUDE_BIN") or shutil.which("claude")
pytestmark = pytest.mark.skipif(not CLAUDE, reason="Claude Code CLI not installed (CLAUDE_BIN)")
SCRIPT = str(Path(sys.executable).parent / "sessions-graph")


def _env(home: Path, db: Path, url: str | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SESSIONS_GRAPH_", "MEMGRAPH_", "ANTHROPIC_", "CLAUDE_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        SESSIONS_GRAPH_DB=str(db),
        SESSIONS_GRAPH_USER_ID="alice",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    if url:
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-offline-test")
    return env


def _entries(home: Path, session_id: str) -> list[dict[str, object]]:
    (path,) = (home / ".claude" / "projects").rglob(f"{session_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _actions(db: Path, session_id: str) -> list[tuple[object, ...]]:
    with SessionsGraph(engine=SQLiteEngine(db)) as graph:
        return [
            (a.action_id, a.action_type, a.text, a.timestamp, a.tool_name, a.tool_use_id)
            for a in graph.get_actions(session_id)
        ]


def test_real_claude_code_history_imports_as_the_hooks_recorded_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / "src" / "shop"
    (project / ".git").mkdir(parents=True)
    hooked_db, imported_db = tmp_path / "hooked.db", tmp_path / "imported.db"
    install = subprocess.run(
        [SCRIPT, "install-hooks"], env=_env(home, hooked_db), capture_output=True, text=True
    )
    assert install.returncode == 0, install.stderr
    prompts = ["Which database did we pick for the cache?", "Check the cache image again"]
    with fake_messages_api() as url:
        for prompt in prompts:
            done = subprocess.run(
                [CLAUDE, "-p", prompt, "--allowedTools", "Bash"],  # type: ignore[list-item]
                cwd=project,
                env=_env(home, hooked_db, url),
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            assert ANSWER in done.stdout
    transcripts = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(transcripts) == 2
    sessions = [t.stem for t in transcripts]

    # The hooks recorded both sessions as they ran.
    hooked = {sid: _actions(hooked_db, sid) for sid in sessions}
    for sid in sessions:
        kinds = [a[1] for a in hooked[sid]]
        assert kinds[0] == "user_message" and "tool_call" in kinds and "tool_result" in kinds
        assert any(a[2] == ANSWER for a in hooked[sid])
        assert any(COMMAND in str(a[2]) for a in hooked[sid] if a[1] == "tool_call")

    # Importing what the hooks captured stores nothing twice.
    again = subprocess.run(
        [SCRIPT, "import"], env=_env(home, hooked_db), capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "imported 2 files: 2 sessions, 0 new actions, 0 skipped"
    assert {sid: _actions(hooked_db, sid) for sid in sessions} == hooked

    # A user who installs only now gets the same sessions and actions from import.
    fresh = subprocess.run(
        [SCRIPT, "import"], env=_env(home, imported_db), capture_output=True, text=True
    )
    assert fresh.returncode == 0, fresh.stderr
    total = sum(len(a) for a in hooked.values())
    assert fresh.stdout.strip() == f"imported 2 files: 2 sessions, {total} new actions, 0 skipped"
    with (
        SessionsGraph(engine=SQLiteEngine(hooked_db)) as by_hooks,
        SessionsGraph(engine=SQLiteEngine(imported_db)) as by_import,
    ):
        for sid in sessions:
            assert _actions(imported_db, sid) == hooked[sid]
            a, b = by_hooks.get_session(sid), by_import.get_session(sid)
            assert a is not None and b is not None and b.user_id == "alice"
            assert (b.cwd, b.project_key) == (a.cwd, a.project_key) == (str(project), "shop")
            # Dated by the transcript's first entry (the hook ran a moment
            # before Claude Code wrote it), not by when it was imported.
            assert a.started_at is not None and b.started_at is not None
            gap = datetime.fromisoformat(b.started_at) - datetime.fromisoformat(a.started_at)
            assert abs(gap.total_seconds()) < 30
            first = next(e["timestamp"] for e in _entries(home, sid) if "timestamp" in e)
            assert b.started_at == parse_timestamp(first)
