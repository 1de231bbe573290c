"""What a hook costs the agent when the store is in trouble (embedded engine).

* a locked store: another process holds the write lock for the whole run;
* the first hook after an outage: ``--spooled`` events wait in the spool.

Each figure is the wall time of one ``python -m sessions_graph hook`` process
(the agent waits for exactly that), next to ``python -c pass``, the floor.
Goal: a hook spends at most about one second (``HOOK_BUDGET_SECONDS``) on
waiting and replay, so both stay near floor + 1 s, whatever the lock or the
spool's length; the rest of the spool is replayed in the background (the
script waits for that and checks that every event landed, in order).

Usage: ``python bench/bench_hook_outage.py [--spooled 3000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOOK = [sys.executable, "-m", "sessions_graph", "hook"]
HOLD_LOCK = (
    "import sqlite3, sys, time\n"
    "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "conn.execute('BEGIN IMMEDIATE')\n"
    "print('locked', flush=True)\n"
    "time.sleep(600)\n"
)


def prompt(text: str) -> str:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "prompt": text})


def timed(cmd: list[str], payload: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=payload, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spooled", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MEMGRAPH_")},
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "SESSIONS_GRAPH_DB": str(root / "bench.db"),
            "SESSIONS_GRAPH_USER_ID": "bench",
        }
        os.environ.update(env)
        from sessions_graph.graph import SessionsGraph
        from sessions_graph.hooks.spool import spool_is_empty, spool_payload
        from sessions_graph.settings import load_settings

        settings = load_settings()
        floor = timed([sys.executable, "-c", "pass"], "", env)
        timed(HOOK, prompt("warm-up"), env)  # creates the database: not measured

        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(root / "bench.db")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        try:
            locked = timed(HOOK, prompt("while locked"), env)
        finally:
            holder.kill()
            holder.wait()
        while not spool_is_empty(settings):  # its background replay
            time.sleep(0.1)

        for n in range(args.spooled):
            spool_payload(settings, json.loads(prompt(f"p{n}")), user_id="bench")
        after_outage = timed(HOOK, prompt("last"), env)
        start = time.perf_counter()
        while not spool_is_empty(settings):
            time.sleep(0.1)
        drained = time.perf_counter() - start

        with SessionsGraph(settings=settings) as graph:
            texts = [a.text for a in graph.get_actions("s-1")]
        expected = ["warm-up", "while locked"] + [f"p{n}" for n in range(args.spooled)]
        assert texts == [*expected, "last"], "every event once, in order"

    print("sessions-graph hook when the store is in trouble, embedded engine (s)")
    print(f"{'python -c pass':<40}{floor:>8.2f}")
    print(f"{'hook, store locked by another process':<40}{locked:>8.2f}")
    print(f"{f'hook, {args.spooled} events spooled':<40}{after_outage:>8.2f}")
    print(f"{'  then background replay until empty':<40}{drained:>8.2f}")


if __name__ == "__main__":
    main()
