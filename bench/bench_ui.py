"""How long each page of the web viewer (``sessions-graph ui``) takes to answer.

A store of 100k actions (1,000 coding sessions of 100 actions, as
``bench_cli`` loads them, half recorded by Claude Code and half by Codex),
the newest ``--reconciled`` sessions reconciled with the local extractor (so
the Entities page has a graph to draw) and 200 memories. Each page is asked
``--runs`` times through the viewer's ASGI application in this process (the
request as the browser sends it: Host 127.0.0.1 and the token), after one
unmeasured warm-up; p50 / p90 / max in ms. Goal: every page under 300 ms.

Usage: ``python bench/bench_ui.py [--runs 20] [--sessions 1000] [--reconciled 150]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench_cli import USER, load
from common import percentile
from starlette.testclient import TestClient

from sessions_graph import SessionsGraph
from sessions_graph.ui.app import create_app

TOKEN = "bench-token"


def build(db: Path, sessions: int, reconciled: int) -> None:
    with SessionsGraph(db=str(db)) as graph:
        graph.setup()
        started = time.perf_counter()
        load(graph, 0, sessions)
        for n in range(sessions):
            sid = f"bench-session-{n}"
            source = (
                f"/home/dev/.claude/projects/x/{sid}.jsonl"
                if n % 2
                else f"/home/dev/.codex/sessions/rollout-2026-01-01T00-00-00-{sid}.jsonl"
            )
            graph.set_import_cursor(sid, source, 0)
            graph.record_session_end(sid)
        for n in range(200):
            graph.save_memory(USER, f"Memory {n}: prefer retry with backoff in worker {n % 17}")
        print(f"loaded {sessions} sessions in {time.perf_counter() - started:.0f} s")
        started = time.perf_counter()
        for n in range(sessions - reconciled, sessions):
            graph.reconcile_session_sync(f"bench-session-{n}", extractor="local")
        print(f"reconciled {reconciled} sessions in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--reconciled", type=int, default=150)
    parser.add_argument("--db", help="Reuse (or keep) the store at this path.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(args.db) if args.db else Path(tmp) / "bench.db"
        if not db.exists():
            build(db, args.sessions, args.reconciled)
        graph = SessionsGraph(db=str(db))
        app = create_app(graph.settings, USER, TOKEN, open_graph=lambda: graph)
        newest = f"bench-session-{args.sessions - 1}"
        memory = graph.get_memories(USER, limit=1)[0].memory_id
        pages = {
            "sessions": "/",
            "sessions ?client=codex": "/?client=codex",
            "sessions ?q=flaky (text)": "/?q=flaky+integration",
            "sessions ?since=2026-10-01": "/?since=2026-10-01",
            "sessions ?entity=pytest": "/?entity=pytest",
            "session (100 actions)": f"/session/{newest}",
            "memories": "/memories",
            "memories ?q=retry": "/memories?q=retry",
            "memories ?edit=": f"/memories?edit={memory}",
            "entities": "/entities",
            "recall": "/recall?q=why+did+the+schema+migration+fail",
            "injections": "/injections",
        }
        print(f"{'page':<28} {'p50':>7} {'p90':>7} {'max':>7}  (ms, {args.runs} runs)")
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for name, path in pages.items():
                url = path + ("&" if "?" in path else "?") + f"token={TOKEN}"
                assert client.get(url).status_code == 200, name  # warm-up
                samples = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    response = client.get(url)
                    samples.append((time.perf_counter() - start) * 1000)
                    assert response.status_code == 200, (name, response.text[:200])
                print(
                    f"{name:<28} {percentile(samples, 0.5):7.1f} {percentile(samples, 0.9):7.1f}"
                    f" {max(samples):7.1f}"
                )
        graph.close()


if __name__ == "__main__":
    main()
