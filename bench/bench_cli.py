"""How long each ``sessions-graph`` command takes as a process: start to output.

Scripts, agents and people run the commands one at a time, so what counts is
the whole process: interpreter start, imports, opening the store, the work,
the printed text. Every command is timed as fresh processes on the embedded
engine, interleaved so that machine noise hits every row alike, and
reported as wall time (p50 / p90 / min) and CPU time (user + system, p50),
each also as a multiple of ``python -c pass`` measured in the same run (the
interpreter's own start-up, the floor). CPU time moves far less than wall
time when the machine is busy.

Goal: every command's CPU p50 <= 6x ``python -c pass``, and ``recall`` p50
<= 150 ms wall at 100k actions.

With ``--trees A B``, each command runs once per tree in turn (the tree put
first on ``PYTHONPATH``, so the same installed dependencies run either
tree's code), each tree on its own copy of the stores (a tree with a newer
schema migrates its copy), and the table has a row per command and tree:
one run compares the code as it was with the code as it is.

The store holds 10k and 100k actions (100 and 1,000 sessions of 100 actions
each: prompts, tool calls, tool results, answers of coding sessions) and
100 memories, loaded through the public API; ``reconcile --pending`` runs
on an empty store (nothing waiting: its own start-up), the others on the
loaded one.

Usage: ``python bench/bench_cli.py [--runs 30] [--sizes 10000 100000]
[--trees /path/to/old/tree .]``. With trees of different schemas, run it
with the oldest tree's package (``PYTHONPATH=/path/to/old/tree``): the
stores are written at the schema of the package the benchmark imports.

An installed package has compiled bytecode (pip writes it at install time),
so the commands run with bytecode caching on even if
``PYTHONDONTWRITEBYTECODE`` is set here: the unmeasured warm-up calls write
it, as an install would.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from common import add_trees_option, on_tree, percentile, process_env, tree_labels

from sessions_graph import SessionsGraph

USER = "bench"
#: Sessions are 7 hours apart from here on: 1,000 sessions span ten months.
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
ACTIONS_PER_SESSION = 100

AREAS = [
    ("cache", "redis", "the cache layer", "src/cache/store.py"),
    ("database", "postgres", "the orders database", "src/db/session.py"),
    ("auth", "oauth", "the login flow", "src/auth/tokens.py"),
    ("deploy", "kubernetes", "the staging deploy", "deploy/helm/values.yaml"),
    ("tests", "pytest", "the flaky integration tests", "tests/test_orders.py"),
    ("ci", "github actions", "the CI pipeline", ".github/workflows/ci.yml"),
    ("migration", "alembic", "the schema migration", "migrations/versions/0042_orders.py"),
    ("api", "fastapi", "the public API", "src/api/routes.py"),
    ("logging", "structlog", "the request logging", "src/observability/logging.py"),
    ("queue", "celery", "the background workers", "src/workers/tasks.py"),
    ("frontend", "react", "the dashboard", "web/src/Dashboard.tsx"),
    ("search", "elasticsearch", "product search", "src/search/indexer.py"),
]
PROMPTS = [
    "Why does {what} fail after the last change? The error mentions {tool}.",
    "Can you refactor {what} so it no longer depends on {tool} directly?",
    "Add tests for {what}; the edge case with empty input is not covered.",
    "Which {area} option did we pick for {what}, and why not the alternative?",
    "The {area} settings in {path} look wrong, please check them.",
    "Speed up {what}: p99 latency doubled since we switched to {tool}.",
    "Write a short design note on {what} for the team.",
]
ANSWERS = [
    "I traced it to {path}: {what} reads a stale config value, so {tool} times out. "
    "I changed the default and added a regression test.",
    "We picked {tool} for {what} because it keeps the {area} logic in one place; "
    "the alternative needed a second service to operate.",
    "Done. {what} now goes through an adapter in {path}, so swapping {tool} later is one file.",
    "The tests pass locally. The remaining failure in {what} is the {area} fixture order.",
    "Latency is back to normal: the {area} client was created per request; it is shared now.",
]
COMMANDS = [
    "pytest -x {test} -q",
    "git diff HEAD~1 -- {path}",
    "rg -n '{area}' src/",
    "make lint",
    "docker compose logs --tail 50 {area}",
]
OUTPUTS = [
    "FAILED {test}::test_{area}_roundtrip - AssertionError: expected 200, got 504",
    "{n} passed, 1 skipped in {s}.2s",
    "src/{area}/__init__.py:12: from .{area} import client\n{path}:88: timeout = 30",
    'Traceback (most recent call last):\n  File "{path}", line {n}\n'
    "{tool}.exceptions.TimeoutError: operation timed out after 30s",
    "ok: lint clean ({n} files checked)",
]
#: Words of everyday engineering talk, so that no two turns read the same.
VOCABULARY = (
    "retry backoff timeout config env variable secret rotate token header cookie session "
    "request response payload schema field column index constraint foreign key join query "
    "plan cost rollout canary feature flag toggle experiment metric dashboard alert pager "
    "incident postmortem owner review approve merge rebase conflict branch release tag "
    "version bump changelog dependency upgrade pin lockfile vendor build cache layer image "
    "container pod node cluster namespace ingress certificate dns proxy gateway rate limit "
    "quota budget memory leak cpu profile flame graph hot path allocation pool connection "
    "thread async await event loop callback handler middleware router endpoint pagination "
    "cursor offset batch stream chunk buffer encoding unicode parser serializer validator "
    "fixture mock stub snapshot golden coverage mutation property fuzz benchmark regression "
    "customer invoice order cart checkout refund shipment inventory warehouse report export"
).split()

QUERIES = [
    "which database did we pick for the cache",
    "why did the schema migration fail",
    "flaky integration tests timeout",
    "staging deploy kubernetes values",
    "oauth login flow tokens refactor",
    "request logging structlog latency",
]


def session_actions(rng: random.Random, session: int) -> list[dict[str, Any]]:
    """One coding session: turns of prompt, tool calls and results, and an answer."""
    area, tool, what, path = AREAS[rng.randrange(len(AREAS))]
    fill = {
        "area": area,
        "tool": tool,
        "what": what,
        "path": path,
        "test": f"tests/test_{area}.py",
    }
    actions: list[dict[str, Any]] = []
    minute = 0

    def add(kind: str, text: str, **extra: Any) -> None:
        nonlocal minute
        minute += 1
        stamp = (START + timedelta(hours=7 * session, minutes=minute)).isoformat()
        actions.append(
            {
                "action_id": f"b{session}-{len(actions)}",
                "action_type": kind,
                "text": text,
                "timestamp": stamp,
                **extra,
            }
        )

    def chatter() -> str:
        return " ".join(rng.choices(VOCABULARY, k=rng.randint(6, 18)))

    ticket = f"ORD-{rng.randint(100, 9999)}"
    while len(actions) < ACTIONS_PER_SESSION:
        prompt = rng.choice(PROMPTS).format(**fill)
        add("user_message", f"{prompt} ({ticket}) Context: {chatter()}.")
        for _ in range(rng.randint(1, 4)):
            if len(actions) >= ACTIONS_PER_SESSION - 2:
                break
            call = f"toolu_{session}_{len(actions)}"
            command = rng.choice(COMMANDS).format(**fill)
            add("tool_call", f'{{"command": "{command}"}}', tool_name="Bash", tool_use_id=call)
            output = rng.choice(OUTPUTS).format(n=rng.randint(3, 400), s=rng.randint(1, 60), **fill)
            add("tool_result", output, tool_use_id=call)
        if len(actions) < ACTIONS_PER_SESSION:
            answer = rng.choice(ANSWERS).format(**fill)
            add("assistant_message", f"{answer} Notes for {ticket}: {chatter()}.")
    return actions[:ACTIONS_PER_SESSION]


def load(graph: SessionsGraph, first: int, last: int) -> None:
    """Sessions ``first`` .. ``last - 1``, through the public API."""
    rng = random.Random(first)
    for n in range(first, last):
        actions = session_actions(rng, n)
        sid = f"bench-session-{n}"
        graph.record_session_start(
            sid,
            user_id=USER,
            cwd=f"/home/dev/{AREAS[n % len(AREAS)][0]}-service",
            started_at=actions[0]["timestamp"],
        )
        graph.record_actions(sid, actions, user_id=USER)


#: Every command timed: its row name and its words (``{db}``: the loaded
#: store, ``{empty}``: an empty one, ``{query}``: a recall question), and the
#: event a ``hook`` reads on stdin.
TIMED: list[tuple[str, list[str]]] = [
    ("--help", ["--help"]),
    ("status", ["status"]),
    ("sessions", ["sessions"]),
    ("sessions --entity", ["sessions", "--entity", "redis"]),
    ("show", ["show", "bench-session-1"]),
    ("entities", ["entities", "--session", "bench-session-1"]),
    ("memory list", ["memory", "list"]),
    ("memory search", ["memory", "search", "cache"]),
    ("config get", ["config", "get", "db"]),
    ("config list", ["config", "list"]),
    ("reconcile --pending", ["--db", "{empty}", "reconcile", "--pending"]),
    ("recall", ["recall", "{query}", "--user", USER]),
    ("--db recall", ["--db", "{db}", "recall", "{query}", "--user", USER]),
    ("hook", ["hook"]),
    ("ui --help", ["ui", "--help"]),
]
HOOK_EVENT = json.dumps(
    {
        "session_id": "bench-hook",
        "cwd": "/home/dev/cache-service",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "make lint"},
        "tool_response": {"stdout": "ok: lint clean"},
    }
)


def timed(cmd: list[str], env: dict[str, str], stdin: bytes | None = None) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one process, in ms. CPU time
    hardly moves with the machine's load; wall time is what a caller waits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, env=env, input=stdin)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{cmd[1:4]} failed: rc={result.returncode} {result.stderr.decode()[:300]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed * 1000, cpu * 1000


def measure(
    script: str,
    env: dict[str, str],
    trees: list[str | None],
    runs: int,
    stores: list[dict[str, str]],
) -> dict[str, list[tuple[float, float]]]:
    """Samples by row name (``command @ tree`` with several trees); each tree
    works on its own copy of the stores (``stores``, one per tree)."""
    rows: dict[str, list[tuple[float, float]]] = {"python -c pass": []}
    labels = tree_labels(trees)
    for i in range(runs):
        rows["python -c pass"].append(timed([sys.executable, "-c", "pass"], env))
        for name, argv in TIMED:
            stdin = HOOK_EVENT.encode() if argv == ["hook"] else None
            for label, tree, words in zip(labels, trees, stores, strict=True):
                fill = {**words, "query": QUERIES[i % len(QUERIES)]}
                cmd = [script, *(word.format(**fill) for word in argv)]
                row = f"{name} @ {label}" if len(trees) > 1 else name
                tree_env = on_tree({**env, "SESSIONS_GRAPH_DB": words["db"]}, tree)
                rows.setdefault(row, []).append(timed(cmd, tree_env, stdin))
    return rows


def copies(root: Path, paths: dict[str, Path], trees: list[str | None]) -> list[dict[str, str]]:
    """A copy of each store for each tree: a tree whose schema is newer
    migrates its copy on first open, which an older tree would then refuse."""
    stores = []
    for n, _ in enumerate(trees):
        words = {}
        for word, path in paths.items():
            copy = root / f"{path.stem}-{n}.db"
            copy.unlink(missing_ok=True)
            with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
                source.backup(target)
            words[word] = str(copy)
        stores.append(words)
    return stores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    add_trees_option(parser)
    args = parser.parse_args()
    trees = args.trees
    script = str(Path(sys.executable).parent / "sessions-graph")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = root / "bench.db"
        empty = root / "empty.db"
        env = process_env(root, db, USER)
        with SessionsGraph(db=str(empty)) as graph:
            graph.setup()
        graph = SessionsGraph(db=str(db))
        graph.setup()
        for n in range(100):
            area = AREAS[n % len(AREAS)]
            graph.save_memory(USER, f"We use {area[1]} for {area[2]}; see {area[3]} (note {n}).")
        loaded = 0
        for size in sorted(args.sizes):
            sessions = size // ACTIONS_PER_SESSION
            start = time.perf_counter()
            load(graph, loaded, sessions)
            print(
                f"loaded {sessions - loaded} sessions ({(sessions - loaded) * ACTIONS_PER_SESSION}"
                f" actions) in {time.perf_counter() - start:.1f} s",
                file=sys.stderr,
            )
            loaded = sessions
            stores = copies(root, {"db": db, "empty": empty}, trees)
            # Writes bytecode, migrates each tree's copy if it must, warms the
            # file cache: not measured.
            measure(script, env, trees, 1, stores)
            rows = measure(script, env, trees, args.runs, stores)
            walls = {name: [w for w, _ in samples] for name, samples in rows.items()}
            cpus = {name: [c for _, c in samples] for name, samples in rows.items()}
            floor = percentile(walls["python -c pass"], 0.5)
            cpu_floor = percentile(cpus["python -c pass"], 0.5)
            width = max(len(name) for name in rows) + 2
            print(f"\n{size:,} actions, embedded engine, {args.runs} processes each (ms)")
            print(
                f"{'':<{width}}{'p50':>8}{'p90':>8}{'min':>8}{'/ pass':>8}"
                f"{'cpu p50':>9}{'/ pass':>8}"
            )
            for name in rows:
                wall, cpu = walls[name], cpus[name]
                p50, cpu50 = percentile(wall, 0.5), percentile(cpu, 0.5)
                print(
                    f"{name:<{width}}{p50:>8.1f}{percentile(wall, 0.9):>8.1f}{min(wall):>8.1f}"
                    f"{p50 / floor:>8.1f}{cpu50:>9.1f}{cpu50 / cpu_floor:>8.1f}"
                )
        graph.close()


if __name__ == "__main__":
    main()
