"""Benchmark: quality and speed of the local extractor.

Quality: precision and recall per entity type on the labelled chunks in
``bench/data/extract_labelled.txt`` (written for this benchmark; a third of
them held out: never looked at while tuning the patterns), reported for the
dev part, the held-out part and both. A finding counts when its name (any
case) and type match a label. Goal, on files, packages, tools, URLs and
errors together: recall >= 0.85 and precision >= 0.90. The named-entity types
(person, organization, product, location) are reported apart, also with
names matched whatever their type.

Speed: chunks per second of the pattern part, and with the named-entity model,
on the same chunks (repeated to ``--chunks``), against LightRAG's own
extraction of them (``extract_entities`` through our ``ChunkExtractor``) with a
scripted model that answers at once: the pipeline's cost without the LLM.
Goal: patterns >= 2,000 chunks/s, with the model >= 200 chunks/s.

    python bench/bench_extract.py [--chunks 2000] [--no-ner] [--json]
    python bench/bench_extract.py --adversarial

``--adversarial``: the pattern part on texts built to make a pattern scan the
rest of a run from every position (a run of "a." before an "@" took 2 s at
32 KB with the unbounded e-mail pattern), at 8 KB and 32 KB. Linear patterns
take about 4x as long for 4x the text; quadratic ones 16x.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sessions_graph.reconcile.chunking import OfflineTokenizer, prepare_unit
from sessions_graph.reconcile.local import LocalExtractor, ner
from sessions_graph.reconcile.local.vocabulary import ENTITY_TYPES, NER_TYPES

DATA = Path(__file__).parent / "data" / "extract_labelled.txt"
GOAL_TYPES = ("file", "package", "tool", "url", "error")
_HEADER = re.compile(r"^### (.*)$")


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The labelled chunks: ``id``, ``kind``, ``split``, ``text`` (as a run
    would store it: normalised and redacted) and ``expected`` {(name, type)}."""
    chunks: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    lines: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        header = _HEADER.match(line)
        if header:
            current = dict(kv.split("=", 1) for kv in header.group(1).split())
            lines = []
            continue
        if current is None:
            continue
        if line.startswith(">>>"):
            expected: set[tuple[str, str]] = set()
            for part in line[3:].split("|"):
                kind, _, names = part.partition(":")
                for name in names.split(";"):
                    if kind.strip() and name.strip():
                        expected.add((name.strip().casefold(), kind.strip()))
            text = "\n".join(lines)
            [chunk] = prepare_unit(text, OfflineTokenizer()).chunks
            chunks.append({**current, "text": chunk.text, "expected": expected})
            current = None
        else:
            lines.append(line)
    return chunks


def predict(extractor: LocalExtractor, chunks: list[dict[str, Any]]) -> list[set[tuple[str, str]]]:
    results = extractor.extract_many([c["text"] for c in chunks])
    return [{(e["name"].casefold(), e["entity_type"]) for e in r.entities} for r in results]


def score(
    chunks: list[dict[str, Any]], predicted: list[set[tuple[str, str]]]
) -> dict[str, dict[str, float]]:
    """Per type (and for the goal and named-entity groups): tp, fp, fn, P, R."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0})
    untyped = {"tp": 0, "fp": 0, "fn": 0}
    for chunk, got in zip(chunks, predicted, strict=True):
        want = chunk["expected"]
        for name, kind in got | want:
            key = (
                "tp"
                if (name, kind) in got and (name, kind) in want
                else ("fp" if (name, kind) in got else "fn")
            )
            counts[kind][key] += 1
        got_ner = {n for n, k in got if k in NER_TYPES}
        want_ner = {n for n, k in want if k in NER_TYPES}
        untyped["tp"] += len(got_ner & want_ner)
        untyped["fp"] += len(got_ner - want_ner)
        untyped["fn"] += len(want_ner - got_ner)
    groups = {
        "GOAL (file+package+tool+url+error)": GOAL_TYPES,
        "NER (typed)": NER_TYPES,
        "ALL": ENTITY_TYPES,
    }
    for group, kinds in groups.items():
        counts[group] = {k: sum(counts[t][k] for t in kinds) for k in ("tp", "fp", "fn")}
    counts["NER (any type)"] = untyped
    out = {}
    for kind, c in counts.items():
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        out[kind] = {**c, "precision": round(p, 3), "recall": round(r, 3)}
    return out


def errors(chunks: list[dict[str, Any]], predicted: list[set[tuple[str, str]]]) -> list[str]:
    lines = []
    for chunk, got in zip(chunks, predicted, strict=True):
        want = chunk["expected"]
        missed = sorted(want - got)
        extra = sorted(got - want)
        if missed or extra:
            lines.append(f"{chunk['id']}: missed {missed} extra {extra}")
    return lines


def _rate(func: Any, n: int) -> float:
    started = time.perf_counter()
    func()
    return n / (time.perf_counter() - started)


async def _instant_llm(prompt: str, system_prompt: str | None = None, **_: Any) -> str:
    d = "<|#|>"
    return "\n".join(
        [
            f"entity{d}Orion{d}Artifact{d}Orion is a service.",
            f"entity{d}Memgraph{d}Artifact{d}Memgraph is a database.",
            f"relation{d}Orion{d}Memgraph{d}storage{d}Orion stores data in Memgraph.",
            "<|COMPLETE|>",
        ]
    )


def lightrag_rate(texts: list[str]) -> float:
    from sessions_graph.reconcile.extraction import ChunkExtractor

    extractor = ChunkExtractor(_instant_llm, concurrency=8)

    async def run() -> None:
        await asyncio.gather(*(extractor.extract(str(i), t) for i, t in enumerate(texts)))

    return _rate(lambda: asyncio.run(run()), len(texts))


def pipeline_rate(chunks: list[dict[str, Any]], sessions: int, per_session: int = 20) -> float:
    """Seconds for ``reconcile --pending`` with the local extractor over
    ``sessions`` sessions of ``per_session`` actions (the labelled chunks, each
    made unique), on a fresh embedded store: the whole pipeline, storage
    included."""
    import tempfile

    from sessions_graph import SessionsGraph
    from sessions_graph.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        graph = SessionsGraph(settings=Settings(db=f"{tmp}/bench.db", extractor="local"))
        graph.setup()
        for s in range(sessions):
            sid = f"s-{s}"
            graph.record_session_start(sid, user_id="bench")
            actions = [
                {
                    "action_id": f"{sid}-{i}",
                    "action_type": "tool_result",
                    "text": chunks[(s * per_session + i) % len(chunks)]["text"] + f"\n({s}.{i})",
                }
                for i in range(per_session)
            ]
            graph.record_actions(sid, actions, user_id="bench")
            graph.record_session_end(sid)
        started = time.perf_counter()
        done = asyncio.run(graph.reconcile_pending(limit=sessions))
        elapsed = time.perf_counter() - started
        graph.close()
    assert all(s.status == "reconciled" for s in done), done
    return elapsed


#: Units repeated into adversarial texts (see ``--adversarial``).
ADVERSARIAL = ["a.", "a+", "a.a.a.a.a@b.b.b.b.b.b.b1 ", "a@b-", "x.y@a.bc1.", "[", '{"a": [']


def adversarial() -> None:
    """Scaling of the pattern part on adversarial texts, 8 KB to 32 KB."""
    from sessions_graph.reconcile.local.patterns import extract_patterns

    print("unit                               ms@8K   ms@32K  ratio (linear ~4, quadratic ~16)")
    for unit in ADVERSARIAL:
        times = []
        for size in (8_000, 32_000):
            text = (unit * (size // len(unit) + 1))[:size] + " @"
            started = time.process_time()
            extract_patterns(text)
            times.append((time.process_time() - started) * 1000)
        print(f"{unit!r:32} {times[0]:8.1f} {times[1]:8.1f} {times[1] / max(times[0], 0.01):6.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=2000, help="chunks per speed run")
    parser.add_argument("--no-ner", action="store_true", help="skip the named-entity model")
    parser.add_argument("--show-errors", action="store_true", help="list misses (dev part)")
    parser.add_argument("--sessions", type=int, default=100, help="sessions for the pipeline run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--adversarial", action="store_true", help="scaling on adversarial texts")
    args = parser.parse_args()
    if args.adversarial:
        adversarial()
        return 0

    chunks = load()
    patterns = LocalExtractor(use_ner=False)
    with_ner = None if args.no_ner else LocalExtractor(use_ner=True, quiet=True)
    if with_ner is not None and not with_ner.uses_ner:
        print(ner.HINT, file=sys.stderr)
        with_ner = None
    report: dict[str, Any] = {"chunks": len(chunks), "quality": {}, "speed": {}}
    for label, extractor in (("patterns", patterns), ("patterns+ner", with_ner)):
        if extractor is None:
            continue
        predicted = predict(extractor, chunks)
        for split in ("dev", "heldout", "all"):
            idx = [i for i, c in enumerate(chunks) if split == "all" or c["split"] == split]
            report["quality"][f"{label}/{split}"] = score(
                [chunks[i] for i in idx], [predicted[i] for i in idx]
            )
        if args.show_errors:
            dev = [i for i, c in enumerate(chunks) if c["split"] == "dev"]
            print("\n".join(errors([chunks[i] for i in dev], [predicted[i] for i in dev])))

    texts = [chunks[i % len(chunks)]["text"] for i in range(args.chunks)]
    patterns.extract_many(texts[:50])  # warm the regex caches
    report["speed"]["patterns_chunks_per_s"] = round(
        _rate(lambda: patterns.extract_many(texts), len(texts))
    )
    report["speed"]["patterns_one_by_one_chunks_per_s"] = round(
        _rate(lambda: [patterns.extract_text(t) for t in texts], len(texts))
    )
    if with_ner is not None:
        with_ner.extract_many(texts[:50])
        report["speed"]["ner_chunks_per_s"] = round(
            _rate(lambda: with_ner.extract_many(texts), len(texts))
        )
    report["speed"]["lightrag_scripted_llm_chunks_per_s"] = round(lightrag_rate(texts))
    if args.sessions:
        elapsed = pipeline_rate(chunks, args.sessions)
        report["speed"]["pipeline_sessions"] = args.sessions
        report["speed"]["pipeline_seconds"] = round(elapsed, 2)
        report["speed"]["pipeline_chunks_per_s"] = round(args.sessions * 20 / elapsed)

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    held = sum(c["split"] == "heldout" for c in chunks)
    print(f"{len(chunks)} labelled chunks ({held} held out)")
    for run, table in report["quality"].items():
        print(f"\n== {run}")
        print(f"{'type':38} {'P':>6} {'R':>6} {'tp':>5} {'fp':>5} {'fn':>5}")
        for kind, s in table.items():
            if s["tp"] + s["fp"] + s["fn"]:
                print(
                    f"{kind:38} {s['precision']:6.3f} {s['recall']:6.3f}"
                    f" {s['tp']:5} {s['fp']:5} {s['fn']:5}"
                )
    print("\n== speed (chunks/s)")
    for key, value in report["speed"].items():
        print(f"{key:38} {value:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
