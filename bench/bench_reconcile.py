"""Benchmark: LLM calls and wall time of a reconciliation sweep.

50 sessions of 10 texts each on the embedded engine; 30% of every session's
texts come from a shared pool, so they repeat across sessions. The model is
scripted: it sleeps a fixed latency and answers in LightRAG's extraction
format. Goals: LLM calls == unique chunks; a second sweep over the same
content (every session re-queued) makes 0 calls; wall time within 1.3x of
``unique_chunks x latency / concurrency``.

    python bench/bench_reconcile.py [--concurrency 8] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sessions_graph import SessionsGraph
from sessions_graph.settings import Settings

DELIM, DONE = "<|#|>", "<|COMPLETE|>"
WORDS = "Orion Vega Memgraph Kafka Postgres Redis Helm Traefik Grafana Falcon".split()


class SlowModel:
    """A model function that sleeps ``latency`` seconds and counts its calls."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def __call__(self, prompt: str, system_prompt: str | None = None, **_: Any) -> str:
        self.calls += 1
        await asyncio.sleep(self.latency)
        a, b = random.sample(WORDS, 2)
        return "\n".join(
            [
                f"entity{DELIM}{a}{DELIM}Artifact{DELIM}{a} is used by the team.",
                f"entity{DELIM}{b}{DELIM}Artifact{DELIM}{b} is used by the team.",
                f"relation{DELIM}{a}{DELIM}{b}{DELIM}integration{DELIM}{a} talks to {b}.",
                DONE,
            ]
        )


def seed(graph: SessionsGraph, sessions: int, per_session: int, shared_ratio: float) -> int:
    """Record the sessions; return the number of distinct texts (= unique chunks)."""
    rng = random.Random(7)
    shared_per_session = round(per_session * shared_ratio)
    pool = [
        f"Shared runbook step {i}: restart {rng.choice(WORDS)} then check {rng.choice(WORDS)}."
        for i in range(15)
    ]
    distinct: set[str] = set()
    for s in range(sessions):
        texts = rng.sample(pool, shared_per_session) + [
            f"Session {s} step {i}: {rng.choice(WORDS)} answered in {rng.randint(1, 999)} ms."
            for i in range(per_session - shared_per_session)
        ]
        distinct.update(texts)
        sid = f"bench-{s:03d}"
        graph.record_session_start(sid, user_id="bench")
        graph.record_actions(
            sid,
            [
                {"action_id": f"{sid}-{i}", "action_type": "tool_result", "text": t}
                for i, t in enumerate(texts)
            ],
        )
        graph.record_session_end(sid)
    return len(distinct)


async def sweep(graph: SessionsGraph, model: SlowModel, concurrency: int) -> tuple[float, int]:
    start, before = time.perf_counter(), model.calls
    summaries = await graph.reconcile_pending(
        limit=1000, llm_model_func=model, concurrency=concurrency
    )
    assert all(s.status == "reconciled" for s in summaries), summaries
    return time.perf_counter() - start, model.calls - before


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--texts", type=int, default=10, help="texts per session")
    parser.add_argument("--shared", type=float, default=0.3, help="share of repeated texts")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per LLM call")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)

    # LightRAG's import is paid once per process, not per chunk: measured apart.
    started = time.perf_counter()
    import lightrag.operate  # noqa: F401

    import_s = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(engine="embedded", db=str(Path(tmp) / "bench.db"), user_id="bench")
        with SessionsGraph(settings=settings) as graph:
            graph.setup()
            unique = seed(graph, args.sessions, args.texts, args.shared)
            model = SlowModel(args.latency)
            wall, calls = asyncio.run(sweep(graph, model, args.concurrency))
            for s in range(args.sessions):  # queue every session again, content unchanged
                graph.mark_pending(f"bench-{s:03d}")
            rewall, recalls = asyncio.run(sweep(graph, model, args.concurrency))

    bound = unique * args.latency / args.concurrency
    print(f"sessions={args.sessions} texts/session={args.texts} shared={args.shared:.0%}")
    print(f"LightRAG import (once per process, not in the times below): {import_s:.2f}s")
    print(f"unique chunks:          {unique}")
    print(f"LLM calls, first sweep: {calls}  ({'==' if calls == unique else '!='} unique)")
    print(f"LLM calls, second sweep over the same content: {recalls}  ({rewall:.2f}s)")
    print(
        f"wall time: {wall:.2f}s; bound unique x latency / concurrency ="
        f" {unique} x {args.latency}s / {args.concurrency} = {bound:.2f}s; ratio {wall / bound:.2f}"
    )
    ok = calls == unique and recalls == 0 and wall <= 1.3 * bound
    print("goals met" if ok else "goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
