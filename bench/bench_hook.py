"""How long one ``sessions-graph hook`` process takes, on the embedded engine.

Runs the console script the way an agent runtime does (a fresh process, the
event JSON on stdin) against a store already holding ``--actions`` actions
(default 100,000, in sessions of 200 actions spread over 10 projects, with
1,000 memories), and reports the median and p90 wall time of:

* ``python -c pass``: the interpreter's own start-up, the floor;
* ``SessionStart``: a new session in a project with history, answered with
  where the user left off (injection);
* ``UserPromptSubmit``: a prompt of that session (answered with matching
  past turns when there are any);
* ``Stop + 50 lines``: a turn end importing 50 new transcript lines (capture only);
* ``PostToolUse``: a tool result, nothing new in the transcript (capture only).

Goals: the two injecting events p50 <= 100 ms and the capture-only ones
<= 50 ms, on a machine where ``python -c pass`` takes about 12 ms; the
ratios to ``python -c pass`` measured in the same run carry the goal to a
loaded or slower machine (<= 8.3x and <= 4.2x).

With ``--trees A B``, every event runs once per tree in turn (the tree put
first on ``PYTHONPATH``, so the same installed dependencies run either
tree's code; the order of the trees rotating from run to run), each tree
with its own store seeded alike by its own code, and the table has a row per
event and tree, with each row's CPU time over the first tree's: one run
compares the code as it was with the code as it is, under the same load.
``--trees . .`` shows the noise between two copies of the same code.

Usage: ``python bench/bench_hook.py [--runs 30] [--actions 100000]
[--trees /path/to/old/tree .]``.

An installed package has compiled bytecode (pip writes it at install time),
so the hook runs with bytecode caching on even if ``PYTHONDONTWRITEBYTECODE``
is set here: the unmeasured warm-up call writes it, as an install would.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from common import add_trees_option, on_tree, percentile, process_env, tree_labels

from sessions_graph import SessionsGraph

#: Text is drawn like English: half function words, half content words from a
#: 5,000-word vocabulary with Zipf frequencies (a few words everywhere, most
#: rare), so that searches touch realistic posting lists.
FUNCTION_WORDS = (
    "the a to of and in is it that for on with as this we be you at by not are or"
    " from but have can will should what which how do did was"
).split()
_SYLLABLES = "ka lo mi nu pe ra si to vu za ber con dis for gra hel mon pri sta tur".split()
VOCABULARY = [
    _SYLLABLES[n % 20] + _SYLLABLES[n // 20 % 20] + _SYLLABLES[n // 400 % 20] for n in range(5000)
]
_ZIPF = [1 / (rank + 1) ** 1.07 for rank in range(len(VOCABULARY))]
PROJECTS = [f"project{n}" for n in range(10)]
#: The events that may answer with context.
INJECTING = ("SessionStart", "UserPromptSubmit")
GOALS_MS = {"SessionStart": 100, "UserPromptSubmit": 100, "Stop + 50 lines": 50, "PostToolUse": 50}


#: CPU time (user + system, ms) of each measured process, by row name: far
#: less sensitive than wall time to other work on a shared machine.
CPU: dict[str, list[float]] = {}


def run(
    name: str, cmd: list[str], payload: str, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Wall time (ms) of one process, recording its CPU time under ``name``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, input=payload.encode(), capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    CPU.setdefault(name, []).append(cpu * 1000)
    # The one stderr line a hook may print when it gives up a slow look-up is
    # counted by the caller; anything else is a failure of the bench.
    gave_up = b"context look-up took over" in result.stderr
    if result.returncode != 0 or (result.stderr and not gave_up):
        sys.exit(f"{name} misbehaved: rc={result.returncode} {result.stderr.decode()[:300]}")
    return elapsed * 1000, result


def timed(name: str, cmd: list[str], payload: str, env: dict[str, str]) -> float:
    """Wall time (ms) of a process that must print nothing."""
    elapsed, result = run(name, cmd, payload, env)
    if result.stdout:
        sys.exit(f"{name} printed on stdout: {result.stdout.decode()[:300]}")
    return elapsed


def sentence(rng: random.Random, n: int = 12) -> str:
    content = rng.choices(VOCABULARY, weights=_ZIPF, k=n)
    return " ".join(w if rng.random() < 0.5 else rng.choice(FUNCTION_WORDS) for w in content)


def seed(db: Path, root: Path, actions: int) -> None:
    """``actions`` actions for user ``bench``: sessions of 200 actions over 10
    projects (user and assistant messages, tool calls and results)."""
    rng = random.Random(7)
    graph = SessionsGraph(db=str(db), user_id="bench")
    graph.setup()
    per_session = 200
    for s in range(max(1, actions // per_session)):
        sid = f"seed-{s}"
        project = PROJECTS[s % len(PROJECTS)]
        graph.record_session_start(
            sid, user_id="bench", cwd=str(root / project), project_key=project
        )
        kinds = ("user_message", "assistant_message", "tool_call", "tool_result")
        graph.record_actions(
            sid,
            [
                {
                    "action_id": f"{sid}-{n}",
                    "action_type": kinds[n % 4],
                    "text": sentence(rng, 30),
                    "timestamp": f"2026-11-{1 + s % 28:02d}T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
                }
                for n in range(per_session)
            ],
            user_id="bench",
        )
    for _ in range(1000):
        graph.save_memory("bench", sentence(rng, 15))
    graph.close()


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


def measure(
    trees: list[str | None], runs: int, homes: list[Path]
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, int], dict[str, int]]:
    """Wall and CPU samples (ms) by row name (``event @ tree`` with several
    trees), and how many look-ups injected context or were given up, by row.

    Each event runs once per tree in turn (the tree order rotating from one
    run to the next), so that load hits every tree alike; a tree's own
    events keep their order (a session's prompt after its start)."""
    hook = [str(Path(sys.executable).parent / "sessions-graph"), "hook"]
    rng = random.Random(11)
    walls: dict[str, list[float]] = {"python -c pass": []}
    injected: dict[str, int] = {}
    given_up: dict[str, int] = {}

    labels = tree_labels(trees)

    def row(name: str, tree: int) -> str:
        return f"{name} @ {labels[tree]}" if len(trees) > 1 else name

    def event(tree: int, name: str, sid: str, path: Path | None, **extra: object) -> str:
        body: dict[str, object] = {
            "session_id": sid,
            "cwd": str(homes[tree] / PROJECTS[0]),
            "hook_event_name": name,
            **extra,
        }
        if path is not None:
            body["transcript_path"] = str(path)
        return json.dumps(body)

    envs = [tree_env(home, tree) for home, tree in zip(homes, trees, strict=True)]
    indices = list(range(len(trees)))
    for tree in indices:  # writes bytecode, adopts the seeded project: not measured
        run("warm-up", hook, event(tree, "SessionStart", "warm-up", None), envs[tree])
    CPU.pop("warm-up")
    for i in range(runs):
        order = indices[i % len(trees) :] + indices[: i % len(trees)]
        walls["python -c pass"].append(
            timed("python -c pass", [sys.executable, "-c", "pass"], "", envs[0])
        )
        sid = str(uuid.uuid4())
        prompt = sentence(rng)
        payloads = {
            tree: {
                "SessionStart": event(
                    tree, "SessionStart", sid, homes[tree] / f"{sid}.jsonl", source="startup"
                ),
                "UserPromptSubmit": event(
                    tree, "UserPromptSubmit", sid, homes[tree] / f"{sid}.jsonl", prompt=prompt
                ),
                "Stop + 50 lines": event(tree, "Stop", "bench-stop", homes[tree] / "stop.jsonl"),
                "PostToolUse": event(
                    tree, "PostToolUse", "bench-stop", homes[tree] / "stop.jsonl", tool_name="Bash"
                ),
            }
            for tree in indices
        }
        for name in payloads[0]:
            for tree in order:
                key = row(name, tree)
                if name.startswith("Stop"):
                    append_turns(homes[tree] / "stop.jsonl", "bench-stop", 50)
                if name in INJECTING:
                    elapsed, result = run(key, hook, payloads[tree][name], envs[tree])
                    injected[key] = injected.get(key, 0) + (b"additionalContext" in result.stdout)
                    given_up[key] = given_up.get(key, 0) + (
                        b"context look-up took over" in result.stderr
                    )
                else:
                    elapsed = timed(key, hook, payloads[tree][name], envs[tree])
                walls.setdefault(key, []).append(elapsed)
    for tree in indices:
        log = homes[tree] / "state" / "sessions-graph" / "sessions-graph.log"
        imported = [
            line for line in log.read_text().splitlines() if "Stop session=bench-stop" in line
        ]
        assert all(line.endswith("new_actions=50") for line in imported), "each Stop imports 50"
        start = row("SessionStart", tree)
        assert injected[start] + given_up[start] == runs, f"{start}: nothing injected"
    return walls, dict(CPU), injected, given_up


def tree_env(home: Path, tree: str | None) -> dict[str, str]:
    """The environment of a hook process of ``tree`` (its code first on
    ``PYTHONPATH``, so the same installed dependencies run either tree's
    code), with its own store, config and state under ``home``."""
    return on_tree(process_env(home, home / "bench.db", "bench"), tree)


def seed_tree(home: Path, tree: str | None, actions: int) -> None:
    """Seed ``home``'s store with ``tree``'s own code (a store is made by the
    code that reads it: an older tree may not open a newer schema), the same
    seeded shape for every tree."""
    env = tree_env(home, tree)
    cwd = home / PROJECTS[0]
    (cwd / ".git").mkdir(parents=True)
    command = [sys.executable, __file__, "--seed-into", str(home), "--actions", str(actions)]
    subprocess.run(command, env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--actions", type=int, default=100_000)
    add_trees_option(parser)
    parser.add_argument("--seed-into", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_into:
        seed(Path(args.seed_into) / "bench.db", Path(args.seed_into), args.actions)
        return
    trees = args.trees
    with tempfile.TemporaryDirectory() as tmp:
        homes = [Path(tmp) / f"tree{n}" for n in range(len(trees))]
        for tree, home in zip(trees, homes, strict=True):
            started = time.perf_counter()
            seed_tree(home, tree, args.actions)
            print(
                f"seeded {args.actions:,} actions for {tree or 'the installed code'}"
                f" in {time.perf_counter() - started:.0f} s"
            )
        walls, cpus, injected, given_up = measure(trees, args.runs, homes)

    floor = statistics.median(walls["python -c pass"])
    cpu_floor = statistics.median(cpus["python -c pass"])
    width = max(len(name) for name in walls) + 2
    print(f"sessions-graph hook, embedded engine, {args.actions:,} actions, {args.runs} runs (ms)")
    if len(trees) > 1:
        print(f"trees: {', '.join(str(t) for t in trees)}; x first: CPU over the first tree's")
    print(
        f"{'':<{width}}{'median':>8}{'p90':>8}{'min':>8}{'x pass':>8}"
        f"{'cpu':>8}{'x pass':>8}{'x first':>8}{'goal':>8}"
    )
    for name, samples in walls.items():
        event = name.split(" @ ")[0]
        first = f"{event} @ {tree_labels(trees)[0]}" if len(trees) > 1 else event
        cpu = statistics.median(cpus[name])
        ratio = f"{cpu / statistics.median(cpus[first]):>8.2f}" if first in cpus else f"{'':>8}"
        goal = f"<={GOALS_MS[event]}" if event in GOALS_MS else ""
        print(
            f"{name:<{width}}{statistics.median(samples):>8.1f}{percentile(samples, 0.9):>8.1f}"
            f"{min(samples):>8.1f}{statistics.median(samples) / floor:>8.2f}"
            f"{cpu:>8.1f}{cpu / cpu_floor:>8.2f}{ratio}{goal:>8}"
        )
    for name in injected:
        print(
            f"{name}: context injected {injected[name]}/{args.runs},"
            f" look-up given up after 1 s {given_up[name]}/{args.runs}"
        )


if __name__ == "__main__":
    main()
