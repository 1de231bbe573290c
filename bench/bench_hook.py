"""How long one ``sessions-graph hook`` process takes, on the embedded engine.

Runs the console script the way an agent runtime does (a fresh process, the
event JSON on stdin) and reports the median wall time of:

* ``python -c pass``: the interpreter's own start-up, the floor;
* ``SessionStart``: a new session, the event agents wait on before the first reply;
* ``Stop + 50 lines``: a turn end that imports 50 new transcript lines.

Usage: ``python bench/bench_hook.py [--runs 30]``. Goal: SessionStart median
<= 80 ms.

An installed package has compiled bytecode (pip writes it at install time),
so the hook runs with bytecode caching on even if ``PYTHONDONTWRITEBYTECODE``
is set here: the unmeasured warm-up call writes it, as an install would.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path


def timed(cmd: list[str], payload: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, input=payload.encode(), capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0 or result.stdout or result.stderr:
        sys.exit(f"hook misbehaved: rc={result.returncode} {result.stderr.decode()[:300]}")
    return elapsed * 1000


def append_turns(path: Path, session_id: str, lines: int) -> None:
    """``lines`` realistic transcript entries: prompts, tool calls, results, answers."""
    with open(path, "a", encoding="utf-8") as fh:
        for i in range(lines):
            kind = ("user", "assistant")[i % 2]
            if i % 4 == 1:
                content: object = [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "Bash",
                        "input": {"command": "ls -la"},
                    }
                ]
            elif i % 4 == 2:
                content = [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i - 1}", "content": "x" * 800}
                ]
            else:
                content = f"message {i}: " + "lorem ipsum " * 40
            entry = {
                "type": kind,
                "uuid": str(uuid.uuid4()),
                "sessionId": session_id,
                "timestamp": "2026-11-29T10:00:00.000Z",
                "message": {"role": kind, "content": content},
            }
            fh.write(json.dumps(entry) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    script = str(Path(sys.executable).parent / "sessions-graph")
    hook = [script, "hook"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "SESSIONS_GRAPH_DB": str(root / "bench.db"),
            "SESSIONS_GRAPH_USER_ID": "bench",
        }
        env = {k: v for k, v in env.items() if not k.startswith("MEMGRAPH_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        transcript = root / "stop.jsonl"

        def start_payload() -> str:
            sid = str(uuid.uuid4())
            path = root / f"{sid}.jsonl"
            return json.dumps(
                {
                    "session_id": sid,
                    "transcript_path": str(path),
                    "cwd": str(root),
                    "hook_event_name": "SessionStart",
                    "source": "startup",
                }
            )

        stop = json.dumps(
            {
                "session_id": "bench-stop",
                "transcript_path": str(transcript),
                "cwd": str(root),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            }
        )
        timed(hook, start_payload(), env)  # creates the database: not measured
        results: dict[str, list[float]] = {
            "python -c pass": [],
            "SessionStart": [],
            "Stop + 50 lines": [],
        }
        for _ in range(args.runs):
            # Interleaved, so that machine noise hits all three alike.
            results["python -c pass"].append(timed([sys.executable, "-c", "pass"], "", env))
            results["SessionStart"].append(timed(hook, start_payload(), env))
            append_turns(transcript, "bench-stop", 50)
            results["Stop + 50 lines"].append(timed(hook, stop, env))
        log = Path(env["XDG_STATE_HOME"]) / "sessions-graph" / "sessions-graph.log"
        imported = [
            line for line in log.read_text().splitlines() if "Stop session=bench-stop" in line
        ]
        assert all(line.endswith("new_actions=50") for line in imported), "each Stop imports 50"

    print(f"sessions-graph hook, embedded engine, {args.runs} runs each (ms)")
    print(f"{'':<18}{'median':>8}{'p90':>8}{'min':>8}")
    for name, samples in results.items():
        samples.sort()
        p90 = samples[min(len(samples) - 1, int(len(samples) * 0.9))]
        print(f"{name:<18}{statistics.median(samples):>8.1f}{p90:>8.1f}{samples[0]:>8.1f}")


if __name__ == "__main__":
    main()
