"""Search latency and write throughput of the embedded engine.

Reports, for 10k and 100k memories:
  * bulk ``save_memory`` throughput (one call, one transaction, per memory);
  * median ``search_memories`` latency over a fixed query mix;
  * the same queries run directly against a bare SQLite FTS5 table holding the
    same text (no users, no validation, no models), and the ratio ours / bare.

Goals: ratio <= 1.5 at 100k; save_memory >= 2,000 memories/s.

    python bench/bench_search.py [--sizes 10000 100000] [--users 1] [--repeat 30]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from sessions_graph import SessionsGraph
from sessions_graph.query import parse, to_fts5

WORDS = (
    "python typescript rust go java docker kubernetes memgraph cypher graph query index "
    "prefers uses likes avoids deploys tests reviews writes reads builds ships fixes "
    "api cli library service database cache queue worker hook session agent memory "
    "fast slow small large simple clear typed async sync local remote daily weekly "
    "tooling data pipeline schema migration release branch commit review deadline team"
).split()
BARE_QUERY = "SELECT rowid, content, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10"
RARE = [f"project{i}" for i in range(500)]
QUERIES = [
    "python",
    "memgraph cypher",
    "rust AND async",
    '"data pipeline"',
    "dep*",
    "project42",
    "python NOT typescript",
    "(docker OR kubernetes) AND deploys",
]


def make_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        words = rng.choices(WORDS, k=rng.randint(6, 16))
        if rng.random() < 0.1:
            words.append(rng.choice(RARE))
        texts.append(" ".join(words).capitalize())
    return texts


def median_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def run(size: int, users: int, repeat: int, workdir: Path) -> dict[str, float]:
    texts = make_texts(size)
    graph = SessionsGraph(db=str(workdir / f"ours-{size}.db"))
    graph.setup()
    start = time.perf_counter()
    for i, text in enumerate(texts):
        graph.save_memory(f"user{i % users}", text)
    save_rate = size / (time.perf_counter() - start)

    bare = sqlite3.connect(workdir / f"bare-{size}.db")
    bare.execute(
        "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 0')"
    )
    with bare:
        bare.executemany("INSERT INTO t(content) VALUES (?)", ((t,) for t in texts))

    ours_ms, bare_ms = [], []
    for q in QUERIES:
        # warm both caches once, then measure
        graph.search_memories("user0", q, limit=10)
        expr = to_fts5(parse(q))
        bare.execute(BARE_QUERY, (expr,)).fetchall()
        ours_ms.append(median_ms(lambda q=q: graph.search_memories("user0", q, limit=10), repeat))
        bare_ms.append(median_ms(lambda e=expr: bare.execute(BARE_QUERY, (e,)).fetchall(), repeat))
    graph.close()
    bare.close()
    ours, base = statistics.median(ours_ms), statistics.median(bare_ms)
    return {
        "size": size,
        "save_per_s": save_rate,
        "ours_ms": ours,
        "bare_ms": base,
        "ratio": ours / base,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--users", type=int, default=1, help="memories spread over N users")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    print(f"users={args.users} queries={len(QUERIES)} repeat={args.repeat}")
    print(f"{'memories':>9} {'save/s':>9} {'ours ms':>9} {'bare ms':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            r = run(size, args.users, args.repeat, Path(tmp))
            print(
                f"{r['size']:>9} {r['save_per_s']:>9.0f} {r['ours_ms']:>9.3f}"
                f" {r['bare_ms']:>9.3f} {r['ratio']:>6.2f}"
            )


if __name__ == "__main__":
    main()
