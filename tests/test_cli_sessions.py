"""``sessions-graph sessions``, ``show`` and ``status``'s health, as a user runs
them: real processes on a real store file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import run
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph import SessionsGraph
from sessions_graph.settings import Settings

CODEX_ROLLOUT = "/home/a/.codex/sessions/2026/01/rollout-2026-01-05T10-00-00-{}.jsonl"


def _env(tmp_path: Path, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSIONS_GRAPH_")}
    return {
        **env,
        "HOME": str(tmp_path / "home"),
        "SESSIONS_GRAPH_USER_ID": "alice",
        "SESSIONS_GRAPH_DB": str(db),
        "SESSIONS_GRAPH_STATE_DIR": str(tmp_path / "state"),
    }


def _session(
    graph: SessionsGraph,
    session_id: str,
    *,
    user: str = "alice",
    started: str,
    project: str,
    prompts: list[str],
    transcript: str | None = None,
) -> None:
    graph.record_session_start(
        session_id, user_id=user, cwd=f"/src/{project}", project_key=project, started_at=started
    )
    actions = []
    for i, prompt in enumerate(prompts):
        actions += [
            {"action_id": f"{session_id}-u{i}", "action_type": "user_message", "text": prompt},
            {
                "action_id": f"{session_id}-c{i}",
                "action_type": "tool_call",
                "tool_name": "Bash",
                "tool_use_id": f"{session_id}-t{i}",
                "text": '{"command": "pytest -q\\n  --maxfail 1"}',
            },
            {
                "action_id": f"{session_id}-r{i}",
                "action_type": "tool_result",
                "tool_use_id": f"{session_id}-t{i}",
                "text": "3 passed\nok\ndone",
            },
            {
                "action_id": f"{session_id}-a{i}",
                "action_type": "assistant_message",
                "text": f"Answer {i} for {session_id}",
            },
        ]
    graph.record_actions(session_id, actions, user_id=user)
    if transcript:
        graph.set_import_cursor(session_id, transcript, 0)


@pytest.fixture
def store(tmp_path: Path) -> dict[str, str]:
    db = tmp_path / "store.db"
    with SessionsGraph(settings=Settings(db=str(db))) as graph:
        graph.setup()
        _session(
            graph,
            "s-old",
            started="2026-01-02T09:00:00Z",
            project="orion",
            prompts=["Set up pgbouncer for orion", "and its pool size"],
            transcript="/home/a/.claude/projects/orion/s-old.jsonl",
        )
        _session(
            graph,
            "s-mid",
            started="2026-01-05T09:00:00Z",
            project="atlas",
            prompts=["Port the atlas importer to Rust"],
            transcript=CODEX_ROLLOUT.format("0a1b2c3d-0000-4000-8000-000000000001"),
        )
        _session(
            graph,
            "s-new",
            started="2026-01-09T09:00:00Z",
            project="orion",
            prompts=["Why is the orion cache cold?", "fix it", "ship it"],
        )
        _session(
            graph,
            "b-own",
            user="bob",
            started="2026-01-10T09:00:00Z",
            project="orion",
            prompts=["bob's secret plan"],
        )
        graph.record_session_end("s-old")
        graph.record_session_end("s-new")
    return _env(tmp_path, db)


def test_sessions_newest_first_with_their_facts(store: dict[str, str]) -> None:
    listed = run(store, "sessions", "--json")
    plain = run(store, "sessions")

    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [r["session_id"] for r in rows] == ["s-new", "s-mid", "s-old"]  # never bob's
    newest, middle, oldest = rows
    assert newest["goal"] == "Why is the orion cache cold?"
    assert newest["goal_from"] == "first request"
    assert (newest["exchanges"], newest["actions"]) == (3, 12)
    assert (newest["project"], newest["status"], middle["status"]) == ("orion", "pending", None)
    assert (middle["client"], oldest["client"], newest["client"]) == ("codex", "claude-code", None)
    first = plain.stdout.splitlines()[0].split()
    assert first[0] == "s-new" and "orion" in first and "3" in first
    assert "bob" not in plain.stdout


def test_sessions_filters(store: dict[str, str]) -> None:
    project = run(store, "sessions", "--project", "orion", "--json")
    since = run(store, "sessions", "--since", "2026-01-04", "--json")
    limit = run(store, "sessions", "--limit", "1", "--json")

    assert [r["session_id"] for r in json.loads(project.stdout)] == ["s-new", "s-old"]
    assert [r["session_id"] for r in json.loads(since.stdout)] == ["s-new", "s-mid"]
    assert [r["session_id"] for r in json.loads(limit.stdout)] == ["s-new"]


def test_a_query_that_finds_nothing_says_so(store: dict[str, str]) -> None:
    entity = run(store, "sessions", "--entity", "pgbouncer")
    project = run(store, "sessions", "--project", "nowhere")
    as_json = run(store, "sessions", "--entity", "pgbouncer", "--json")
    bad_date = run(store, "sessions", "--since", "last tuesday-ish")

    # Not reconciled: no entity is known yet, and the answer says so plainly.
    assert (entity.returncode, entity.stdout.strip()) == (0, "no session mentions pgbouncer")
    assert (project.returncode, project.stdout.strip()) == (0, "no session in project nowhere")
    assert json.loads(as_json.stdout) == []
    assert bad_date.returncode == 1 and bad_date.stderr.count("\n") == 1
    assert "since must be a date" in bad_date.stderr


def test_show_prints_the_session_folded(store: dict[str, str]) -> None:
    shown = run(store, "show", "s-old")
    as_json = run(store, "show", "s-old", "--json")
    foreign = run(store, "show", "b-own")

    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].split()[:2] == ["session", "s-old"] and "claude-code" in lines[0]
    assert "goal (first request): Set up pgbouncer for orion" in shown.stdout
    # The request, its tool call with its result on one line, the answer.
    at = lines.index("  > Set up pgbouncer for orion")
    assert lines[at + 1] == '  * Bash  {"command": "pytest -q\\n --maxfail 1"}  -> 3 lines'
    assert lines[at + 2] == "  < Answer 0 for s-old"
    assert "[2]" in shown.stdout and "entities: none yet (not reconciled)" in shown.stdout
    assert "injected: nothing recorded" in shown.stdout
    detail = json.loads(as_json.stdout)
    assert [len(e["steps"]) for e in detail["exchanges"]] == [3, 3]
    assert foreign.returncode == 1 and foreign.stdout == ""
    assert foreign.stderr == "error: session b-own not found for user alice\n"


def test_status_tells_health_and_what_to_do(store: dict[str, str], tmp_path: Path) -> None:
    before = run(store, "status")
    installed = run(store, "install-hooks", "--user", "--no-mcp")
    rejected = tmp_path / "state" / "spool" / "rejected"
    rejected.mkdir(parents=True)
    (rejected / "00000000000000000001-00000001-0001.json").write_text("{}")
    after = run(store, "status")
    as_json = json.loads(run(store, "status", "--json").stdout)

    assert "problem: no agent runs our hooks: run `sessions-graph install-hooks`" in before.stdout
    assert installed.returncode == 0, installed.stderr
    settings_file = tmp_path / "home" / ".claude" / "settings.json"
    assert f"claude-code:    hooks: user {settings_file}; mcp: not registered" in after.stdout
    assert "no agent runs our hooks" not in after.stdout
    assert "problem: claude-code has our hooks but not the MCP server" in after.stdout
    assert "problem: 1 hook events were rejected" in after.stdout
    assert "reconciliation: 2 pending, 0 failed" in after.stdout
    health = as_json["health"]
    assert health["clients"][0]["hooks"][0]["events"][0] == "SessionStart"
    assert health["clients"][1]["last_session"]["session_id"] == "s-mid"  # codex's newest
    assert health["spool"]["rejected"] == 1


def test_status_shows_each_clients_last_hook_event(store: dict[str, str], tmp_path: Path) -> None:
    before = run(store, "status")
    transcript = ClaudeTranscript(tmp_path / "t" / "s-hook.jsonl", "s-hook")
    transcript.append(transcript.user("Why is the orion cache cold?"), transcript.assistant("TTL."))
    hooked = run(store, "hook", stdin=claude_payload("Stop", "s-hook", transcript.path))
    codex_bad = run(store, "hook", stdin='{"type": "agent-turn-complete"}')
    after = run(store, "status")
    health = json.loads(run(store, "status", "--json").stdout)["health"]

    assert "last hook: none yet" in before.stdout
    assert hooked.returncode == 0 and codex_bad.returncode == 0
    lines = after.stdout.splitlines()
    claude = lines.index(next(line for line in lines if line.startswith("claude-code:")))
    assert re.fullmatch(
        r" {16}last hook: Stop at 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC: stored 2 actions",
        lines[claude + 1],
    ), lines[claude + 1]
    codex = lines.index(next(line for line in lines if line.startswith("codex:")))
    assert lines[codex + 1].endswith("rejected (bad payload)"), lines[codex + 1]
    assert health["clients"][0]["last_hook"]["outcome"] == "stored 2 actions"
    assert health["clients"][0]["last_hook"]["event"] == "Stop"


def test_a_project_is_a_key_or_a_directory(tmp_path: Path) -> None:
    """``--project`` takes what ``recall --project`` takes: a project key, or
    a directory (``.`` is here), its sessions and those below it."""
    db = tmp_path / "p.db"
    here = tmp_path / "src" / "orion"
    (here / "web").mkdir(parents=True)
    with SessionsGraph(db=str(db)) as graph:
        for sid, cwd in (("s-top", here), ("s-web", here / "web"), ("s-else", tmp_path)):
            graph.record_session_start(sid, user_id="alice", cwd=str(cwd), project_key=str(cwd))
            graph.record_actions(
                sid, [{"action_id": f"{sid}-0", "action_type": "user_message", "text": "hi"}]
            )
    env = {**os.environ, "SESSIONS_GRAPH_DB": str(db), "SESSIONS_GRAPH_USER_ID": "alice"}

    def listed(project: str) -> set[str]:
        run = subprocess.run(
            [sys.executable, "-m", "sessions_graph", "sessions", "--project", project, "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=here,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        return {r["session_id"] for r in json.loads(run.stdout)}

    assert listed(".") == {"s-top", "s-web"}
    assert listed(str(here / "web")) == {"s-web"}
    assert listed(str(here)) == {"s-top", "s-web"}


def test_show_says_what_each_prompts_answer_used_of_its_injection(
    store: dict[str, str],
) -> None:
    """The prompt hook injects two past exchanges about orion's pgbouncer
    into a new session and records the prompt's interaction; once answered
    from one of them, ``show`` prints per injection how much the answer used."""
    from sessions_graph.hooks.inject import context_for

    with SessionsGraph(settings=Settings(db=store["SESSIONS_GRAPH_DB"])) as graph:
        graph.record_session_start("s-pool", user_id="alice", cwd="/src/orion", project_key="orion")
        graph.record_actions(
            "s-pool",
            [
                {
                    "action_id": "p-u",
                    "action_type": "user_message",
                    "text": "Set the orion pgbouncer pool mode",
                },
                {
                    "action_id": "p-a",
                    "action_type": "assistant_message",
                    "text": "The orion pgbouncer runs pool_mode=transaction.",
                },
            ],
            user_id="alice",
        )
        graph.record_session_start("s-ask", user_id="alice", cwd="/src/orion", project_key="orion")
        graph.record_injection("alice", "s-ask", "SessionStart", ["turn:s-mid-u0"], 20)
        payload = {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s-ask",
            "prompt": "How is pgbouncer set up for orion?",
            "cwd": "/src/orion",
        }
        assert context_for(graph, graph.settings, payload, "alice")
        [asked] = graph.interactions("alice", "s-ask")
        assert sorted(item.id for item in asked.context) == ["p-u", "s-old-u0"]
        graph.record_answer(asked.interaction_id, "It uses pool_mode=transaction.", user_id="alice")

    shown = run(store, "show", "s-ask")
    assert shown.returncode == 0, shown.stderr
    # The ledger's rows, newest first: each its time, event, tokens, items.
    prompt, start = [line.split()[1:] for line in shown.stdout.splitlines()[-2:]]
    assert prompt[0] == "UserPromptSubmit"
    assert prompt[-4:] == ["answer", "used", "1", "(50%)"]
    assert start == ["SessionStart", "20", "tokens", "1", "items", "answer", "used", "-"]


def test_show_prints_a_sessions_memories_redacted(store: dict[str, str]) -> None:
    """Memories are stored as written: ``show`` prints them as every read
    path shows stored text, the secret replaced."""
    token = "ghp_" + "Abcdefghijklmnopqrstuvwxyz0123456789"
    with SessionsGraph(db=store["SESSIONS_GRAPH_DB"]) as graph:
        graph.save_memory("alice", f"The orion deploy bot uses {token}", "s-old")
    shown = run(store, "show", "s-old")
    assert shown.returncode == 0, shown.stderr
    assert "memory: The orion deploy bot uses [REDACTED:" in shown.stdout
    assert token[:12] not in shown.stdout
