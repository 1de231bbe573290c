"""How good the injected context is: noise, repeats, decision recall,
tokens and leaks, on a corpus of real Claude Code and Codex sessions.

The corpus (``bench/data/inject/``, made by ``bench/inject_corpus.py``) is
multi-session coding work in three projects, two of them called ``api``,
recorded by the real clients with our hooks and MCP server live, so that
the transcripts hold our own injected blocks, our tool's results and the
clients' context. Its manifest names the decisions planted in each project
and the later sessions (probes) whose prompts need them.

The bench replays the corpus into a fresh store through the real path
(``sessions-graph import`` of the transcripts, in a scratch home where the
projects exist as git roots with their remotes), then for each probe runs
real ``sessions-graph hook`` processes: ``SessionStart`` in the project, each
prompt's ``UserPromptSubmit``, ``SessionEnd``; and parses the injected
blocks from the hooks' output. Each ``- `` line of a block is one item; its
quotes are the JSON strings on it. The measures:

* **noise**: share of items quoting derived content or client context (the
  quote holds our element or a client element, or is found only in actions
  that ``sessions_graph.provenance`` marks derived or client);
* **repeats**: share of items whose quotes were all shown in an earlier block
  of the same session, and share of items whose quotes all appear in another
  item of the same block (a quote cut shorter counts as the same text); with
  the injection ledger (when the store has one), item ids noted twice;
* **decision recall**: share of (probe, planted decision) pairs whose
  decision sentence, whole, reaches a block of the probe session by the
  prompt that needs it;
* **tokens**: median and p90 of the tokens of each SessionStart and each
  prompt's block (an event that injects nothing counts 0), estimated as
  the hook does;
* **leaks**: share of items of a session of another project that carry no
  ``project "<name>"`` label.

Goals: noise 0, repeats 0, decision recall >= 0.95, tokens median <= 600 at
start and <= 400 per prompt, leaks 0.

Usage: ``python bench/bench_inject.py [--code NAME=PATH ...] [--json] [--show]``:
``--code`` runs the hooks and the import with the package at PATH (another
checkout, for a before/after comparison), one column each; the measuring is
this tree's. ``--show`` prints each probe's blocks.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

from common import percentile, process_env  # noqa: E402

from sessions_graph.hooks.transcript import import_actions  # noqa: E402
from sessions_graph.provenance import CONVERSATION, MEMORY_ELEMENT, mark, origin  # noqa: E402
from sessions_graph.recall.render import estimate_tokens  # noqa: E402

CORPUS = HERE / "data" / "inject"
USER = "alice"
#: A JSON string on an item line.
_QUOTE = re.compile(r'"(?:[^"\\]|\\.)*"')
_SESSION = re.compile(r"session ([A-Za-z0-9_.:-]+)")
#: The role a recalled turn is shown with ("user: ", "tool call (Bash): ").
_ROLE = re.compile(r"^(?:>>\s*)?(?:user|assistant|system|tool call|tool result)(?: \([^)]*\))?: ")
#: Shortest quote segment compared as text (shorter ones, "ok", tell nothing).
MIN_SEGMENT = 12
GOALS = {
    "noise": 0.0,
    "repeats_in_session": 0.0,
    "duplicates_in_block": 0.0,
    "decision_recall": 0.95,
    "start_tokens_median": 600,
    "prompt_tokens_median": 400,
    "leaks": 0.0,
}


@dataclass
class Item:
    """One line of an injected block."""

    line: str
    segments: list[str]  # its quoted texts, normalised, cut at " | " (window lines)
    session_id: str | None
    labelled: bool


@dataclass
class Block:
    event: str
    prompt: str | None
    context: str
    items: list[Item] = field(default_factory=list)


def norm(text: str) -> str:
    return " ".join(text.split()).strip("… ").casefold()


def parse_block(context: str) -> list[Item]:
    """The items of an injected block: its ``- `` lines, each with its quotes."""
    items = []
    for line in context.splitlines():
        if not line.startswith("- "):
            continue
        segments = []
        labelled = False
        for match in _QUOTE.finditer(line):
            if line[: match.start()].endswith("project "):
                labelled = True  # the label names a project, it quotes nothing
                continue
            for part in json.loads(match.group()).split(" | "):
                part = norm(_ROLE.sub("", part.strip()))
                if part:
                    segments.append(part)
        session = _SESSION.search(line)
        items.append(Item(line, segments, session.group(1) if session else None, labelled))
    return items


def block_text(context: str) -> str:
    """Every quote of a block, decoded and normalised, one string."""
    return " ".join(norm(json.loads(m.group())) for m in _QUOTE.finditer(context))


def _same(a: str, b: str) -> bool:
    """Two quotes of one text: equal, or one cut shorter than the other."""
    short, long_ = sorted((a, b), key=len)
    return len(short) >= MIN_SEGMENT and long_.startswith(short)


def _all_shown(segments: list[str], shown: list[str]) -> bool:
    """Every segment long enough to compare is among ``shown`` (and there is one)."""
    compared = [s for s in segments if len(s) >= MIN_SEGMENT]
    return bool(compared) and all(any(_same(s, t) for t in shown) for s in compared)


# -- the corpus ------------------------------------------------------------------
def load_manifest(corpus: Path = CORPUS) -> dict[str, Any]:
    return json.loads((corpus / "manifest.json").read_text())


def materialise(corpus: Path, home: Path, manifest: dict[str, Any]) -> list[Path]:
    """The corpus's transcripts under ``home`` (their ``/home/alice`` made
    ``home``, in both spellings) and its projects as git roots; the files."""
    old = manifest["home"]
    files = []
    for session in manifest["sessions"]:
        raw = gzip.decompress((corpus / session["file"]).read_bytes()).decode()
        raw = raw.replace(old, str(home)).replace(_dashed(old), _dashed(str(home)))
        target = home / _dashed_path(session["file"], old, home).removesuffix(".gz")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(raw)
        files.append(target)
    for project in manifest["projects"].values():
        root = Path(project["path"].replace(old, str(home)))
        (root / ".git").mkdir(parents=True, exist_ok=True)
        config = "[core]\n\trepositoryformatversion = 0\n"
        if project["remote"]:
            config += f'[remote "origin"]\n\turl = {project["remote"]}\n'
        (root / ".git" / "config").write_text(config)
    return files


def _dashed(path: str) -> str:
    """A path as Claude Code names its project directory."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _dashed_path(rel: str, old: str, home: Path) -> str:
    return rel.replace(_dashed(old), _dashed(str(home)))


def corpus_origins(files: list[Path], manifest: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The normalised texts of the corpus's actions: (conversation, derived or
    client), read and marked by this tree's transcript reader and provenance."""
    conversation, other = [], []
    for path, session in zip(files, manifest["sessions"], strict=True):
        actions = [dict(a) for a in import_actions(path, 0, session["session_id"]).actions]
        for action in actions:
            action.pop("origin", None)  # marked here, whatever the reader set
        mark(actions, set())
        for action in actions:
            text = norm(action["text"] or "")
            (conversation if action["origin"] == CONVERSATION else other).append(text)
    return conversation, other


# -- the replay ------------------------------------------------------------------
class Replay:
    """A fresh store and home, with the hooks of the package at ``code``."""

    def __init__(self, root: Path, code: Path, manifest: dict[str, Any], corpus: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.db = root / "sessions.db"
        self.manifest = manifest
        self.env = process_env(root, self.db, USER)
        self.env.update(HOME=str(self.home), PYTHONPATH=str(code))
        self.env["XDG_DATA_HOME"] = str(root / "data")
        self.files = materialise(corpus, self.home, manifest)

    def project_dir(self, name: str) -> str:
        return self.manifest["projects"][name]["path"].replace(
            self.manifest["home"], str(self.home)
        )

    def sessions_graph(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "sessions_graph", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
            # Not this tree: ``-m`` puts the working directory first on the path.
            cwd=self.root,
        )
        if result.returncode != 0:
            raise SystemExit(f"sessions-graph {args[0]} failed: {result.stderr[-2000:]}")
        return result.stdout

    def import_corpus(self) -> None:
        self.sessions_graph("import", *map(str, self.files))

    def hook(self, payload: dict[str, Any]) -> str:
        """The context a hook process injected for ``payload`` ('' for none)."""
        out = self.sessions_graph("hook", stdin=json.dumps(payload)).strip()
        if not out:
            return ""
        return json.loads(out)["hookSpecificOutput"].get("additionalContext") or ""

    def probe(self, index: int, probe: dict[str, Any]) -> tuple[str, list[Block]]:
        """One later session: SessionStart, each prompt, SessionEnd."""
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-inject/probe/{index}"))
        base = {"session_id": session_id, "cwd": self.project_dir(probe["project"])}
        blocks = []
        start = self.hook({**base, "hook_event_name": "SessionStart", "source": "startup"})
        blocks.append(Block("SessionStart", None, start, parse_block(start)))
        for prompt, _needs in probe["prompts"]:
            got = self.hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
            blocks.append(Block("UserPromptSubmit", prompt, got, parse_block(got)))
        self.hook({**base, "hook_event_name": "SessionEnd", "reason": "exit"})
        return session_id, blocks

    def ledger(self) -> dict[str, list[list[str]]] | None:
        """Each session's injections' item ids, if the store keeps a ledger."""
        with sqlite3.connect(self.db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "injections" not in tables:
                return None
            rows = conn.execute(
                "SELECT session_id, item_ids FROM injections ORDER BY injected_at"
            ).fetchall()
        found: dict[str, list[list[str]]] = {}
        for session, items in rows:
            found.setdefault(session, []).append(json.loads(items))
        return found


# -- the measures ----------------------------------------------------------------
def is_noise(item: Item, conversation: list[str], other: list[str]) -> bool:
    """The item quotes our element, client context, or text that only derived
    or client actions hold."""
    if f"<{MEMORY_ELEMENT}" in item.line:
        return True
    for segment in item.segments:
        if origin("user_message", segment) != CONVERSATION:
            return True
        if len(segment) < MIN_SEGMENT:
            continue
        if any(segment in t for t in other) and not any(segment in t for t in conversation):
            return True
    return False


def measure(
    runs: list[tuple[dict[str, Any], str, list[Block]]],
    manifest: dict[str, Any],
    conversation: list[str],
    other: list[str],
    ledger: dict[str, list[list[str]]] | None,
) -> dict[str, Any]:
    """The five measures over the probes' blocks (see the module docstring)."""
    project_of = {s["session_id"]: s["project"] for s in manifest["sessions"]}
    project_of.update({sid: probe["project"] for probe, sid, _ in runs})
    decisions = manifest["decisions"]
    items = noise = repeats = duplicates = leaks = 0
    start_tokens, prompt_tokens = [], []
    pairs: dict[tuple[int, str], bool] = {}
    examples: dict[str, list[str]] = {"noise": [], "repeats": [], "duplicates": [], "leaks": []}
    for index, (probe, _session, blocks) in enumerate(runs):
        shown: list[str] = []
        seen_text = ""
        needs = [None, *(need for _prompt, need in probe["prompts"])]
        for block, needed in zip(blocks, needs, strict=True):
            tokens = estimate_tokens(block.context) if block.context else 0
            (start_tokens if block.event == "SessionStart" else prompt_tokens).append(tokens)
            seen_text += " " + block_text(block.context)
            for key in needed or ():
                want = norm(decisions[key]["text"])
                pairs[(index, key)] = pairs.get((index, key), False) or want in seen_text
            for n, item in enumerate(block.items):
                items += 1
                if is_noise(item, conversation, other):
                    noise += 1
                    examples["noise"].append(item.line)
                if _all_shown(item.segments, shown):
                    repeats += 1
                    examples["repeats"].append(item.line)
                others = [s for m, o in enumerate(block.items) if m != n for s in o.segments]
                if _all_shown(item.segments, others):
                    duplicates += 1
                    examples["duplicates"].append(item.line)
                where = project_of.get(item.session_id or "")
                if where is not None and where != probe["project"] and not item.labelled:
                    leaks += 1
                    examples["leaks"].append(item.line)
            for item in block.items:
                shown += item.segments
    ledger_repeats = None
    if ledger is not None:
        ledger_repeats = 0
        for _probe, session, _blocks in runs:
            noted: set[str] = set()
            for ids in ledger.get(session, []):
                ledger_repeats += len(set(ids) & noted)
                noted |= set(ids)

    def share(n: int) -> float:
        return n / items if items else 0.0

    return {
        "probes": len(runs),
        "items": items,
        "noise": share(noise),
        "repeats_in_session": share(repeats),
        "duplicates_in_block": share(duplicates),
        "ledger_repeats": ledger_repeats,
        "decision_recall": sum(pairs.values()) / len(pairs) if pairs else 0.0,
        "decisions_missed": sorted(f"probe {i}: {k}" for (i, k), ok in pairs.items() if not ok),
        "start_tokens_median": statistics.median(start_tokens),
        "start_tokens_p90": percentile(start_tokens, 0.9),
        "prompt_tokens_median": statistics.median(prompt_tokens),
        "prompt_tokens_p90": percentile(prompt_tokens, 0.9),
        "leaks": share(leaks),
        "examples": {k: v[:3] for k, v in examples.items()},
    }


def run(
    code: Path, corpus: Path = CORPUS, probes: list[int] | None = None, keep: Path | None = None
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], str, list[Block]]]]:
    """Replay the corpus with the package at ``code`` and measure the probes
    (all, or those numbered in ``probes``)."""
    manifest = load_manifest(corpus)
    with tempfile.TemporaryDirectory(prefix="bench-inject-") as tmp:
        root = keep or Path(tmp)
        replay = Replay(root, code, manifest, corpus)
        replay.import_corpus()
        chosen = [(i, p) for i, p in enumerate(manifest["probes"]) if probes is None or i in probes]
        runs = []
        for index, probe in chosen:
            session, blocks = replay.probe(index, probe)
            runs.append((probe, session, blocks))
        conversation, other = corpus_origins(replay.files, manifest)
        return measure(runs, manifest, conversation, other, replay.ledger()), runs


def table(results: dict[str, dict[str, Any]]) -> str:
    """One row per measure, one column per code measured."""
    rows = [
        ("noise (derived or client items)", "noise", "0"),
        ("repeats: shown earlier in the session", "repeats_in_session", "0"),
        ("repeats: duplicating another item", "duplicates_in_block", "0"),
        ("repeats: ledger ids noted twice", "ledger_repeats", "0"),
        ("decision recall", "decision_recall", ">= 0.95"),
        ("tokens at SessionStart, median", "start_tokens_median", "<= 600"),
        ("tokens at SessionStart, p90", "start_tokens_p90", ""),
        ("tokens per prompt, median", "prompt_tokens_median", "<= 400"),
        ("tokens per prompt, p90", "prompt_tokens_p90", ""),
        ("leaks (unlabelled items of another project)", "leaks", "0"),
        ("items injected", "items", ""),
    ]
    names = list(results)
    lines = [
        "| measure | goal | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for label, key, goal in rows:
        cells = []
        for name in names:
            value = results[name][key]
            cells.append(
                "n/a"
                if value is None
                else f"{value:.2f}"
                if isinstance(value, float)
                else str(value)
            )
        lines.append(f"| {label} | {goal} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--code",
        action="append",
        help="a checkout to measure, NAME=PATH (repeatable; default: this tree)",
    )
    parser.add_argument("--json", action="store_true", help="print the measures as JSON")
    parser.add_argument("--show", action="store_true", help="print each probe's blocks")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    for spec in args.code or [f"this={REPO}"]:
        name, _, path = spec.rpartition("=")
        code = Path(path).resolve()
        if not (code / "sessions_graph" / "__init__.py").is_file():
            parser.error(f"{code} holds no sessions_graph package")
        measures, runs = run(code)
        results[name or str(code)] = measures
        if args.show:
            for probe, _session, blocks in runs:
                print(f"## probe in {probe['project']} ({probe['client']})")
                for block in blocks:
                    print(f"-- {block.event} {block.prompt or ''}\n{block.context}\n")
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(table(results))
    for name, measures in results.items():
        if measures["decisions_missed"]:
            print(f"{name}: missed {', '.join(measures['decisions_missed'])}")
        for kind, lines in measures["examples"].items():
            for line in lines:
                print(f"{name}: {kind}: {line[:240]}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
