"""Recall quality on real conversations and recall speed at 10k / 100k actions.

Quality (``--locomo PATH``, a LoCoMo JSON file; any split works): each
conversation is loaded through the public API as one user
``locomo-<sample_id>``, each ``session_N`` a session ``<sample_id>-s<N>``
started at ``session_N_date_time``, each turn an action ``<sample_id>.<dia_id>``
(``user_message`` for speaker_a, ``assistant_message`` for speaker_b) whose text
is ``"<speaker>: <text>"`` plus ``" [shared image: <caption>]"``. Every
question of categories 1-4 is asked with ``recall(user, question, limit=10)``:

* turn R@k: an evidence turn is among the first k turn hits (a hit counts
  as the turn that ranked first in it; a second row counts every turn of
  the exchange a hit shows: a request and its reply are one hit);
* session R@5: an evidence turn's session is among the first 5 distinct
  sessions of the hits, in hit order.

The baseline, in the same run: a bare SQLite FTS5 table (unicode61, one row
per turn, the user's rows only) asked the question's words OR-ed together,
BM25 order.

Speed (``--speed``): 100 and 1,000 generated coding sessions of 100 actions
(10k and 100k actions: prompts, answers, tool calls and longer tool results;
see ``session_actions``), recall p50 / p90 on the embedded engine against a
bare FTS5 table of the same action texts asked the same words in the same
run; and the cost the turn index adds to ``record_actions`` (batches of 50,
as a hook's Stop event imports them).

    python bench/bench_recall.py --locomo PATH [--samples ID...] [--speed] [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common import percentile

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.index_text.words import query_terms
from sessions_graph.recall.core import recall as plain_recall
from sessions_graph.settings import Settings

_WORD = re.compile(r"[^\W_]+")


# -- LoCoMo -------------------------------------------------------------------------
def locomo_time(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023" as a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shared image: {turn['blip_caption']}]"
    return text


def sessions_of(conversation: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    numbers = sorted(
        int(m.group(1))
        for key in conversation
        if (m := re.fullmatch(r"session_(\d+)", key)) and conversation[key]
    )
    return [
        (n, conversation[f"session_{n}_date_time"], conversation[f"session_{n}"]) for n in numbers
    ]


def load_locomo(graph: SessionsGraph, samples: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Store every conversation; return (user, action_id, text) of each turn."""
    turns = []
    for sample in samples:
        sid, conversation = sample["sample_id"], sample["conversation"]
        user = f"locomo-{sid}"
        for number, when, session_turns in sessions_of(conversation):
            session_id = f"{sid}-s{number}"
            graph.record_session_start(session_id, user_id=user, started_at=locomo_time(when))
            actions = [
                {
                    "action_id": f"{sid}.{t['dia_id']}",
                    "action_type": "user_message"
                    if t["speaker"] == conversation["speaker_a"]
                    else "assistant_message",
                    "text": turn_text(t),
                }
                for t in session_turns
            ]
            graph.record_actions(session_id, actions, user_id=user)
            turns += [(user, a["action_id"], a["text"]) for a in actions]
    return turns


def questions(samples: list[dict[str, Any]]) -> list[tuple[str, str, int, set[str]]]:
    out = []
    for sample in samples:
        sid = sample["sample_id"]
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            # Evidence ids come as "D1:3", sometimes several in one string.
            evidence = {
                f"{sid}.{e}" for item in qa["evidence"] for e in re.split(r"[;,\s]+", item) if e
            }
            out.append((f"locomo-{sid}", qa["question"], qa["category"], evidence))
    return out


def session_of(action_id: str) -> str:
    """``conv-26.D3:7`` -> ``conv-26-s3``."""
    sample, dia = action_id.rsplit(".", 1)
    return f"{sample}-s{dia.split(':')[0][1:]}"


class Scores:
    def __init__(self) -> None:
        self.counts: dict[str, float] = defaultdict(float)
        self.total = 0

    def add(
        self,
        ranked_turns: list[str] | list[list[str]],
        ranked_sessions: list[str],
        evidence: set[str],
    ) -> None:
        """``ranked_turns``: each hit's turn id, or the ids of every turn it shows."""
        self.total += 1
        for k in (1, 5, 10):
            shown = {
                t for hit in ranked_turns[:k] for t in ([hit] if isinstance(hit, str) else hit)
            }
            self.counts[f"R@{k}"] += bool(evidence & shown)
        sessions = list(dict.fromkeys(ranked_sessions))[:5]
        self.counts["session R@5"] += bool({session_of(e) for e in evidence} & set(sessions))

    def row(self) -> list[str]:
        keys = ("R@1", "R@5", "R@10", "session R@5")
        return [f"{self.counts[k] / max(self.total, 1):.3f}" for k in keys]


def bare_index(turns: list[tuple[str, str, str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(user UNINDEXED, action_id UNINDEXED, text)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", turns)
    return conn


def bare_query(question: str) -> str:
    words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
    return " OR ".join(f'"{w}"' for w in words)


def quality(path: Path, only: list[str] | None = None) -> None:
    samples = json.loads(path.read_text(encoding="utf-8"))
    if only:
        samples = [s for s in samples if s["sample_id"] in only]
        if not samples:
            raise SystemExit(f"none of {', '.join(only)} in {path}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "locomo.db"
        graph = SessionsGraph(engine=SQLiteEngine(db), settings=Settings(db=str(db)))
        started = time.perf_counter()
        turns = load_locomo(graph, samples)
        load_s = time.perf_counter() - started
        bare = bare_index(turns)
        asked = questions(samples)
        ours, baseline, shown = Scores(), Scores(), Scores()
        by_category: dict[int, Scores] = defaultdict(Scores)
        for user, question, category, evidence in asked:
            hits = graph.recall(user, question, limit=10).hits
            turn_ids = [h.action_id for h in hits if h.kind == "turn" and h.action_id]
            sessions = [h.session_id for h in hits if h.session_id]
            ours.add(turn_ids, sessions, evidence)
            exchanges = [h.exchange or [h.action_id] for h in hits if h.kind == "turn"]
            shown.add([[t for t in e if t] for e in exchanges], sessions, evidence)
            by_category[category].add(turn_ids, sessions, evidence)
            rows = bare.execute(
                "SELECT action_id FROM t WHERE t MATCH ? AND user = ? ORDER BY rank LIMIT 10",
                (bare_query(question), user),
            ).fetchall()
            ids = [r[0] for r in rows]
            baseline.add(ids, [session_of(i) for i in ids], evidence)
        graph.close()
    print(
        f"\nLoCoMo {path.name}: {len(samples)} conversations, {len(turns)} turns"
        f" (loaded in {load_s:.1f} s), {len(asked)} questions of categories 1-4\n"
    )
    print("| | turn R@1 | turn R@5 | turn R@10 | session R@5 |")
    print("| --- | --- | --- | --- | --- |")
    print("| bare FTS5 BM25 | " + " | ".join(baseline.row()) + " |")
    print("| recall | " + " | ".join(ours.row()) + " |")
    print("| recall, every turn a hit shows | " + " | ".join(shown.row()) + " |")
    for category in sorted(by_category):
        scores = by_category[category]
        cells = " | ".join(scores.row())
        print(f"| recall, category {category} ({scores.total}) | {cells} |")


# -- speed -----------------------------------------------------------------------------
VOCABULARY = (
    "cache redis postgres sqlite migration schema index query planner latency timeout retry "
    "worker queue kafka consumer producer partition offset deploy staging production rollback "
    "docker compose kubernetes helm chart ingress service endpoint handler middleware auth "
    "token session cookie login oauth refresh expiry config settings env variable secret "
    "test fixture mock pytest coverage flaky ci pipeline lint ruff mypy typing dataclass "
    "pydantic model validation error exception traceback logging metrics tracing span "
    "refactor rename extract module package import circular dependency upgrade version "
    "benchmark profile memory leak allocation thread async await event loop socket http "
    "json yaml toml parser serializer encoding unicode bytes stream buffer file path "
    "database table column row transaction lock deadlock replica backup restore snapshot "
    "frontend react component state props hook render css layout button form modal route "
    "api client request response status header payload webhook graphql rest grpc proto "
    "cli command flag option argument stdout stderr exit signal process subprocess shell "
    "git branch commit merge rebase conflict diff patch review release tag changelog"
).split()
SYLLABLES = "ka ro mi ta lo ne vi su pe do ga ri zo mu fe ba ti ko na le".split()
#: The general vocabulary, in a fixed, arbitrary order of frequency: the
#: coding words above among 3,000 other words (a project's own terms, made of
#: syllables), as a real project's sessions use thousands of distinct words.
RANKED = random.Random(0).sample(
    VOCABULARY
    + list(dict.fromkeys("".join(random.Random(i).choices(SYLLABLES, k=3)) for i in range(6000)))[
        :3000
    ],
    len(VOCABULARY) + 3000,
)
FUNCTION_WORDS = (
    "the a an to of in on for and or but is are was be it this that we you i with as at "
    "by from not now then so if when there here can will should would could have has had"
).split()
VERBS = "fix add remove rename move split merge update check explain debug profile".split()
TOOLS = ("Bash", "Read", "Edit", "Grep", "Write")


_WEIGHTS: dict[tuple[int, float], list[float]] = {}


def zipf_choice(rng: random.Random, items: list[str], s: float = 1.0) -> str:
    """An item drawn with probability ~ 1 / rank^s: a few words are everywhere."""
    key = (len(items), s)
    if key not in _WEIGHTS:
        weights = [1 / (rank**s) for rank in range(1, len(items) + 1)]
        _WEIGHTS[key] = [sum(weights[: i + 1]) for i in range(len(weights))]
    return rng.choices(items, cum_weights=_WEIGHTS[key])[0]


def session_actions(rng: random.Random, session: int, count: int) -> list[dict[str, Any]]:
    """One coding session: prompts, answers, tool calls and longer results.

    Text is drawn the way a project's sessions read: function words, a few
    topic words that this session keeps coming back to (Zipf over a coding
    vocabulary), general words (Zipf over ``RANKED``), and the session's own
    identifiers (module, function and file names made of syllables)."""
    topic = [zipf_choice(rng, VOCABULARY, 0.5) for _ in range(6)]
    name = f"module{session}"
    identifiers = [
        "".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))) for _ in range(rng.randint(5, 30))
    ]
    actions: list[dict[str, Any]] = []

    def words(k: int) -> str:
        out = []
        for _ in range(k):
            roll = rng.random()
            if roll < 0.35:
                out.append(rng.choice(FUNCTION_WORDS))
            elif roll < 0.6:
                out.append(rng.choice(topic))
            elif roll < 0.85:
                out.append(zipf_choice(rng, RANKED))
            else:
                out.append(rng.choice(identifiers))
        return " ".join(out)

    while len(actions) < count:
        kind = len(actions) % 5
        if kind == 0:
            text = f"{rng.choice(VERBS)} the {words(3)} in {name}: {words(rng.randint(8, 30))}?"
            action = {"action_type": "user_message", "text": text}
        elif kind == 1:
            text = f"I will {rng.choice(VERBS)} {words(4)}. {words(rng.randint(20, 60))}."
            action = {"action_type": "assistant_message", "text": text}
        elif kind == 2:
            tool = rng.choice(TOOLS)
            path = f"src/{name}/{rng.choice(identifiers)}.py"
            text = f'{{"command": "grep -rn {rng.choice(topic)} {path}"}}'
            action = {"action_type": "tool_call", "tool_name": tool, "text": text}
        elif kind == 3:
            lines = [
                f"src/{name}/{rng.choice(identifiers)}.py:{rng.randint(1, 900)}: {words(8)}"
                for _ in range(rng.randint(3, 20))
            ]
            action = {"action_type": "tool_result", "tool_name": "Bash", "text": "\n".join(lines)}
        else:
            text = f"Done: {words(rng.randint(10, 40))}. The {rng.choice(topic)} now {words(5)}."
            action = {"action_type": "assistant_message", "text": text}
        action["action_id"] = f"s{session}-a{len(actions)}"
        actions.append(action)
    return actions


SPEED_QUESTIONS = [
    "which database did we pick for the cache?",
    "why did the kafka consumer time out in staging",
    "how did we fix the flaky pytest fixture",
    "what was the rollback plan for the production deploy",
    "where is the oauth token refresh handled",
    "memory leak in the async event loop",
    "the migration that renamed the schema index",
    "what did we decide about ruff and mypy in ci",
    "module42 parser unicode bytes",
    "helm chart ingress timeout config",
]


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def speed(sizes: list[int], repeat: int) -> None:
    print("\n| actions | recall p50 | recall p90 | plain layer p50 | bare FTS5 p50 | p50 ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "speed.db"
            graph = SessionsGraph(engine=SQLiteEngine(db), settings=Settings(db=str(db)))
            rng = random.Random(size)
            bare = sqlite3.connect(Path(tmp) / "bare.db")
            bare.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
            for session in range(size // 100):
                sid = f"s{session}"
                graph.record_session_start(sid, user_id="dev", cwd=f"/src/project{session % 7}")
                actions = session_actions(rng, session, 100)
                for start in range(0, 100, 50):
                    graph.record_actions(sid, actions[start : start + 50], user_id="dev")
                bare.executemany("INSERT INTO t VALUES (?)", [(a["text"],) for a in actions])
            bare.commit()
            ours: list[float] = []
            plain: list[float] = []
            base: list[float] = []
            for question in SPEED_QUESTIONS:
                graph.recall("dev", question)  # warm the page cache
                ours += timed(lambda g=graph, q=question: g.recall("dev", q), repeat)
                plain += timed(lambda g=graph, q=question: plain_recall(g.engine, "dev", q), repeat)
                # The bare query gets the same words recall searches (no stop
                # words), so the ratio is recall's own overhead.
                match = " OR ".join(f'"{" ".join(t)}"' for t in query_terms(question))
                base += timed(
                    lambda b=bare, m=match: b.execute(
                        "SELECT rowid, text FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10", (m,)
                    ).fetchall(),
                    repeat,
                )
            graph.close()
            bare.close()
        p50, p90, b50 = percentile(ours, 0.5), percentile(ours, 0.9), percentile(base, 0.5)
        print(
            f"| {size:,} | {p50:.1f} ms | {p90:.1f} ms | {percentile(plain, 0.5):.1f} ms"
            f" | {b50:.1f} ms | {p50 / b50:.2f} |"
        )


def write_cost(batches: int = 200) -> None:
    """``record_actions`` of 50 actions with the turn index and with its
    upkeep switched off, two fresh files written batch by batch in turn, so
    that both see the same load on the machine."""
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for label in ("without the turn index", "with the turn index"):
            db = Path(tmp) / f"{len(graphs)}.db"
            graphs[label] = SessionsGraph(engine=SQLiteEngine(db), settings=Settings(db=str(db)))
        off = graphs["without the turn index"].engine
        off._index_turns = lambda *args: None  # type: ignore[attr-defined]
        samples: dict[str, list[float]] = {label: [] for label in graphs}
        rng = random.Random(1)
        for session in range(batches // 2):
            actions = session_actions(rng, session, 100)
            for start in (0, 50):
                for label, graph in graphs.items():
                    started = time.perf_counter()
                    graph.record_actions(f"s{session}", actions[start : start + 50], user_id="dev")
                    samples[label].append((time.perf_counter() - started) * 1000)
        for graph in graphs.values():
            graph.close()
    print("\n| record_actions, 50 actions | p50 | p90 |")
    print("| --- | --- | --- |")
    for label, measured in samples.items():
        p50, p90 = percentile(measured, 0.5), percentile(measured, 0.9)
        print(f"| {label} | {p50:.2f} ms | {p90:.2f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, help="a LoCoMo JSON file (quality)")
    parser.add_argument("--speed", action="store_true", help="run the speed benchmark")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument(
        "--samples", nargs="+", help="only these conversations (sample_id), e.g. a held-out part"
    )
    args = parser.parse_args()
    if not args.locomo and not args.speed:
        parser.error("give --locomo PATH and/or --speed")
    if args.locomo:
        quality(args.locomo, args.samples)
    if args.speed:
        write_cost()
        speed(args.sizes, args.repeat)


if __name__ == "__main__":
    main()
