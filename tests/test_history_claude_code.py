"""History import against the real Claude Code CLI: its own transcripts, its
own hook calls (``claude_harness``: a scripted Messages API on loopback, a
scratch HOME, our hooks installed). ``sessions-graph import`` then reads the
transcripts Claude Code wrote. Skipped without the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from claude_harness import ClaudeCode, text, tool_use

from sessions_graph.clock import parse_timestamp
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.graph import SessionsGraph

ANSWER = "We picked Redis for the cache: the compose file pins redis 7."
COMMAND = "echo redis:7-alpine"


def _entries(home: Path, session_id: str) -> list[dict[str, object]]:
    (path,) = (home / ".claude" / "projects").rglob(f"{session_id}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def _actions(db: Path, session_id: str) -> list[tuple[object, ...]]:
    with SessionsGraph(engine=SQLiteEngine(db)) as graph:
        return [
            (a.action_id, a.action_type, a.text, a.timestamp, a.tool_name, a.tool_use_id)
            for a in graph.get_actions(session_id)
        ]


def _import(claude_code: ClaudeCode, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**claude_code.env, "SESSIONS_GRAPH_DB": str(db)}
    return subprocess.run(
        [sys.executable, "-m", "sessions_graph", "import"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_real_claude_code_history_imports_as_the_hooks_recorded_it(
    claude_code: ClaudeCode, tmp_path: Path
) -> None:
    project = claude_code.home / "src" / "shop"
    (project / ".git").mkdir(parents=True)
    hooked_db = Path(claude_code.env["SESSIONS_GRAPH_DB"])
    imported_db = tmp_path / "imported.db"
    claude_code.install_hooks()
    for prompt in ("Which database did we pick for the cache?", "Check the cache image again"):
        claude_code.api.then(
            text("Let me check the compose file."),
            tool_use("Bash", {"command": COMMAND, "description": "Show the cache image"}),
        ).then(text(ANSWER))
        done = claude_code.run(prompt, project, "--allowedTools", "Bash")
        assert ANSWER in done.stdout
    transcripts = sorted((claude_code.home / ".claude" / "projects").rglob("*.jsonl"))
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
    again = _import(claude_code, hooked_db)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "imported 2 files: 2 sessions, 0 new actions, 0 skipped"
    assert {sid: _actions(hooked_db, sid) for sid in sessions} == hooked

    # A user who installs only now gets the same sessions and actions from import.
    fresh = _import(claude_code, imported_db)
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
            assert (b.cwd, b.project_key) == (a.cwd, a.project_key) == (str(project), str(project))
            # Dated by the transcript's first entry (the hook ran a moment
            # before Claude Code wrote it), not by when it was imported.
            assert a.started_at is not None and b.started_at is not None
            gap = datetime.fromisoformat(b.started_at) - datetime.fromisoformat(a.started_at)
            assert abs(gap.total_seconds()) < 30
            first = next(
                e["timestamp"] for e in _entries(claude_code.home, sid) if "timestamp" in e
            )
            assert b.started_at == parse_timestamp(first)

    # And recall finds the decision in the imported history.
    asked = subprocess.run(
        [sys.executable, "-m", "sessions_graph", "recall", "what cache database did we pick"],
        env={**claude_code.env, "SESSIONS_GRAPH_DB": str(imported_db)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert asked.returncode == 0, asked.stderr
    assert "We picked Redis for the cache" in asked.stdout
    assert any(f"session {sid}" in asked.stdout for sid in sessions)
