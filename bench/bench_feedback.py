"""Feedback on recall: does rating answers help the rated questions without
hurting the others, what do the weights cost, and how often is ``used``
right?

Quality (``--locomo PATH``): LoCoMo loaded as ``bench_recall`` loads it.
Pass 1 asks every question of categories 1-4 once, each with a session id
of its own (so that it is recorded as an Interaction; a session per question
keeps session-first recall from putting earlier questions first), with
``limit=5``: the five hits an answer would be built from, and the
interaction's context. A simulated user rates half of the questions, chosen
by a fixed seed: 5 when an evidence turn is among the five, 1 otherwise.
Pass 2 asks every question again, once per ``feedback_influence`` tried (the
weights do not change between them: pass 2 rates nothing). Reported: turn
R@5 of the rated half in pass 1 and pass 2, and for the unrated half the
change in R@5 (goal: a fall of at most 0.005).

Used (same run): each pass-1 interaction is answered with LoCoMo's own
answer to the question, and ``used`` is compared with the evidence: of the
items marked used, the share that are evidence turns (precision), and of the
evidence turns given, the share marked used (recall).

Cost (``--speed``): recall p50 at 100k actions (``bench_recall``'s
generated sessions) for a user with stored weights, with the weights read
and blended, against the same recall with the weight read switched off, in
the same run; and the Stop hook's answer capture (``record_turn_answer``)
with an interaction waiting and with none.

    python bench/bench_feedback.py --locomo PATH [--influence 0 0.25 0.5] [--speed]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_recall import SPEED_QUESTIONS, load_locomo, questions, session_actions
from common import percentile

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.hooks.interactions import record_turn_answer
from sessions_graph.settings import Settings

SEED = 7
LIMIT = 5


def _r5(hits: list[Any], evidence: set[str]) -> bool:
    turns = [h.action_id for h in hits if h.kind == "turn"][:LIMIT]
    return bool(evidence & set(turns))


def quality(path: Path, influences: list[float]) -> None:
    samples = json.loads(path.read_text(encoding="utf-8"))
    answers = {
        (f"locomo-{s['sample_id']}", qa["question"]): str(qa.get("answer", ""))
        for s in samples
        for qa in s["qa"]
    }
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        settings = Settings(db=str(db), feedback_influence=0.0)
        graph = SessionsGraph(engine=SQLiteEngine(db), settings=settings)
        load_locomo(graph, samples)
        asked = questions(samples)
        rated = set(random.Random(SEED).sample(range(len(asked)), len(asked) // 2))
        first: list[bool] = []
        used = {"marked": 0, "marked_evidence": 0, "evidence_given": 0, "evidence_marked": 0}
        for n, (user, question, _category, evidence) in enumerate(asked):
            result = graph.recall(user, question, limit=LIMIT, session_id=f"p1-{n}")
            hit = _r5(result.hits, evidence)
            first.append(hit)
            answered = graph.record_answer(
                result.interaction_id, answers[(user, question)], user_id=user
            )
            for item in answered.context if answered else []:
                is_evidence = item.kind == "turn" and item.id in evidence
                used["marked"] += bool(item.used)
                used["marked_evidence"] += bool(item.used) and is_evidence
                used["evidence_given"] += is_evidence
                used["evidence_marked"] += is_evidence and bool(item.used)
            if n in rated:
                graph.feedback(user, result.interaction_id, 5 if hit else 1)
        rows = []
        for influence in influences:
            settings.feedback_influence = influence
            second = [
                # A fresh session per run too: the same session asked again
                # would put its earlier interaction first (session-first).
                _r5(
                    graph.recall(user, q, limit=LIMIT, session_id=f"p2-{influence}-{n}").hits,
                    evidence,
                )
                for n, (user, q, _c, evidence) in enumerate(asked)
            ]
            rows.append((influence, second))
        graph.close()
    unrated = [n for n in range(len(asked)) if n not in rated]

    def share(values: list[bool], which: list[int] | set[int]) -> float:
        return sum(values[n] for n in which) / max(len(which), 1)

    print(
        f"\nLoCoMo {path.name}: {len(asked)} questions, {len(rated)} rated"
        f" ({sum(first[n] for n in rated)} with 5, the rest with 1), seed {SEED}\n"
    )
    print("| feedback_influence | rated R@5 pass 1 | rated R@5 pass 2 | unrated R@5 change |")
    print("| --- | --- | --- | --- |")
    for influence, second in rows:
        print(
            f"| {influence:g} | {share(first, rated):.3f} | {share(second, rated):.3f}"
            f" | {share(second, unrated) - share(first, unrated):+.4f} |"
        )
    precision = used["marked_evidence"] / max(used["marked"], 1)
    recall = used["evidence_marked"] / max(used["evidence_given"], 1)
    print(
        f"\n`used` against LoCoMo's answers: {used['marked']} items marked used,"
        f" precision {precision:.3f} (evidence among them), recall {recall:.3f}"
        f" (of {used['evidence_given']} evidence turns given)"
    )


def speed(size: int, repeat: int, influence: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "speed.db"
        settings = Settings(db=str(db), feedback_influence=influence)
        graph = SessionsGraph(engine=SQLiteEngine(db), settings=settings)
        rng = random.Random(size)
        for session in range(size // 100):
            sid = f"s{session}"
            graph.record_session_start(sid, user_id="dev")
            actions = session_actions(rng, session, 100)
            for start in range(0, 100, 50):
                graph.record_actions(sid, actions[start : start + 50], user_id="dev")
        # Weights of the kind ratings leave: every question rated a few times.
        for n, question in enumerate(SPEED_QUESTIONS * 3):
            result = graph.recall("dev", question, limit=10, session_id=f"rate-{n}")
            graph.feedback("dev", result.interaction_id, 1 + n % 5)
        with_weights: list[float] = []
        without: list[float] = []
        read = graph.engine.feedback_weights
        for question in SPEED_QUESTIONS:
            graph.recall("dev", question)  # warm the page cache
            for _ in range(repeat):
                graph.engine.feedback_weights = read  # type: ignore[method-assign]
                started = time.perf_counter()
                graph.recall("dev", question)
                with_weights.append((time.perf_counter() - started) * 1000)
                graph.engine.feedback_weights = lambda user_id, keys: {}  # type: ignore[method-assign]
                started = time.perf_counter()
                graph.recall("dev", question)
                without.append((time.perf_counter() - started) * 1000)
        graph.engine.feedback_weights = read  # type: ignore[method-assign]
        stop = _stop_capture(graph, repeat * 20)
        graph.close()
    p50w, p50 = percentile(with_weights, 0.5), percentile(without, 0.5)
    print(f"\n| recall at {size:,} actions | p50 | p90 |")
    print("| --- | --- | --- |")
    print(
        f"| with weights (influence {influence:g}) | {p50w:.1f} ms"
        f" | {percentile(with_weights, 0.9):.1f} ms |"
    )
    print(f"| without | {p50:.1f} ms | {percentile(without, 0.9):.1f} ms |")
    print(f"\ncost of the weights: {100 * (p50w / p50 - 1):+.1f}% at p50")
    print("\n| Stop: answer capture | p50 | p90 |")
    print("| --- | --- | --- |")
    for label, samples in stop.items():
        print(
            f"| {label} | {percentile(samples, 0.5):.2f} ms | {percentile(samples, 0.9):.2f} ms |"
        )


def _stop_capture(graph: SessionsGraph, rounds: int) -> dict[str, list[float]]:
    """``record_turn_answer`` as the Stop hook runs it, on a session of 100
    actions: with a prompt interaction waiting for the turn's reply, and
    with none (every Stop of a session nothing was injected into)."""
    out: dict[str, list[float]] = {"an interaction waiting": [], "none waiting": []}
    rng = random.Random(3)
    for n in range(rounds):
        sid = f"stop-{n}"
        graph.record_session_start(sid, user_id="dev")
        actions = session_actions(rng, 10_000 + n, 100)
        graph.record_actions(sid, actions[:95], user_id="dev")
        hits = graph.recall("dev", "kafka consumer timeout", limit=5).hits
        graph.record_interaction(
            "dev",
            sid,
            "why did the kafka consumer time out",
            [h.model_dump() for h in hits],
            source="prompt",
            seq_from=95,
        )
        graph.record_actions(sid, actions[95:], user_id="dev")
        for label in out:
            started = time.perf_counter()
            record_turn_answer(graph, sid, "dev")
            out[label].append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, help="a LoCoMo JSON file (quality)")
    parser.add_argument(
        "--influence", type=float, nargs="+", default=[0.0, 0.1, 0.25, 0.5, 0.75, 1.0]
    )
    parser.add_argument("--speed", action="store_true", help="the cost of the weights")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--speed-influence", type=float, default=0.5)
    args = parser.parse_args()
    if not args.locomo and not args.speed:
        parser.error("give --locomo PATH and/or --speed")
    if args.locomo:
        quality(args.locomo, args.influence)
    if args.speed:
        speed(args.size, args.repeat, args.speed_influence)


if __name__ == "__main__":
    main()
