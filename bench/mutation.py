"""Mutation score of the modules that matter most: plant one small bug at a
time, run the tests that execute the code it is in, count the bugs they catch.

    python bench/mutation.py [--sample 20] [--seed 1] [--fresh-from 1] [--budget 120]
                             [--workers 2] [--module recall ...] [--retrace]

Prints one line per module, ``module  killed/total  score``, where total
leaves out the survivors judged equivalent in ``bench/mutation_equivalent.txt``
(a change that no user could observe, each with the reason), then every other
survivor (file:line, what was changed): each is a missing test.

Which tests run for a mutant: a first pass runs the test pool once on the
unchanged tree under coverage, in the test process and in every Python
process the tests start (a ``sitecustomize`` on their path), and records for
each test the lines of ``sessions_graph`` it ran and the Cypher files it
read, its duration, and whether it passed. A mutant then runs only the
passing tests that ran its statement (for a line outside any function, or
one run at import: every test that runs its file; for a Cypher file: every
test that reads it), fastest first and within ``--budget`` seconds of their
traced time, stopping at the first failure. The trace
is cached per code, Cypher and test helpers; a test file changed since is
traced again on its own. Needs ``coverage`` (the dev extra).

Mutations (simple, as a developer's slip would be):

* Python: a comparison flipped (``==``/``!=``, ``<``/``<=``, ``>``/``>=``,
  ``in``/``not in``, ``is``/``is not``), ``and``/``or`` swapped, a ``not``
  dropped, an integer constant off by one, ``True``/``False`` swapped, an
  arithmetic ``+``/``-`` swapped.
* SQL inside Python strings and Cypher files: one condition made always true
  (``x = ?`` -> ``(x = ? OR 1)``, ``a.b = $c`` -> ``(a.b = $c OR true)``),
  which keeps the statement valid and its parameters in place.

The sample is drawn per module from a seeded generator: ``--seed`` picks
which mutants, ``--fresh-from S`` leaves out the ones seed ``S`` picked, so
that an independent sample of new mutants can be scored the same way.

Each worker runs in its own temporary copy of the tree; the working tree is
never touched. A mutant counts as killed when its tests fail or time out.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: module -> the source it covers (globs relative to the root).
TARGETS: dict[str, list[str]] = {
    "redact": ["sessions_graph/redact.py"],
    "recall": ["sessions_graph/recall/*.py"],
    "hooks": ["sessions_graph/hooks/*.py"],
    "sqlite": ["sessions_graph/engines/sqlite/*.py"],
    "memgraph": ["sessions_graph/engines/memgraph/*.py"],
    "cypher": ["cypher/**/*.cypher"],
    "reconcile": ["sessions_graph/reconcile/*.py"],
    "query": ["sessions_graph/query.py"],
}

#: The tests a mutant may be judged by. Left out: the end-to-end runs of the
#: real Claude Code and Codex (minutes each) and the browser tests of the viewer.
TEST_POOL = ["tests/test_*.py"]
TEST_EXCLUDED = ["tests/test_e2e_*.py", "tests/test_ui.py"]

EQUIVALENT = ROOT / "bench" / "mutation_equivalent.txt"

#: Traced seconds of tests a mutant runs at most, its fastest covering tests
#: first: a line every recorded action runs (redaction, the store) is covered
#: by a thousand tests, and the fast ones that aim at it come first.
BUDGET = 120.0

#: Seconds a mutant's tests may take beyond three times their traced time;
#: longer counts as killed (a hang).
TIMEOUT_SLACK = 60

_FLIP: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SQL_CONDITION = re.compile(r"\b([a-z_]+\.[a-z_]+|[a-z_]+) (=|<|<=|>|>=|!=) (\?|[a-z_]+\.[a-z_]+)")
#: A comparison of a name or parameter with another, not followed by more of
#: an expression (``h.seq - $radius``, ``coalesce(...)``), so that making it
#: always true keeps the statement valid.
_CYPHER_CONDITION = re.compile(
    r"(\$?[a-z_]+(?:\.[a-z_]+)?) (=|<>|<|<=|>|>=|STARTS WITH|IN) (\$?[a-z_]+(?:\.[a-z_]+)?)"
    r"(?![\w.(]|\s*[-+*/])"
)


@dataclass(frozen=True)
class Mutant:
    module: str
    path: str  # relative to the root
    line: int
    what: str
    code: str  # the original line, stripped: names the mutant across line moves
    #: The lines whose execution runs it (empty: any line of its file).
    lines: tuple[int, ...]
    text: str  # the whole mutated file

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.what, self.code)


# --- Planting ----------------------------------------------------------------


def _lines_of(tree: ast.Module) -> dict[int, tuple[int, ...]]:
    """For each source line, the lines whose execution runs it: those of the
    innermost statement holding it (a compound statement's header only; a
    function's header, where defaults and decorators sit, stands for its
    body). Nothing for a line outside any function: its mutant is judged by
    every test that runs the file."""
    spans: list[tuple[int, int, tuple[int, ...]]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                continue
            end = child.end_lineno or child.lineno
            body = getattr(child, "body", None)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.append((first, child.body[0].lineno - 1, tuple(range(first, end + 1))))
                visit(child, True)
            elif isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                if in_function:
                    header = tuple(range(child.lineno, body[0].lineno))
                    spans.append((child.lineno, body[0].lineno - 1, header))
                visit(child, in_function)
            elif in_function:
                spans.append((child.lineno, end, tuple(range(child.lineno, end + 1))))

    visit(tree, False)
    found: dict[int, tuple[int, ...]] = {}
    # Outer statements first, so that an inner one overwrites its lines.
    for first, last, lines in sorted(spans, key=lambda s: s[0] - s[1]):
        for number in range(first, last + 1):
            found[number] = lines
    return found


def _python_mutants(module: str, path: str, source: str) -> list[Mutant]:
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    runs = _lines_of(tree)
    in_fstring = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for child in ast.walk(node)
    }
    out: list[Mutant] = []

    def add(number: int, changed: str, what: str) -> None:
        text = "".join([*lines[: number - 1], changed, *lines[number:]])
        code = lines[number - 1].strip()
        out.append(Mutant(module, path, number, what, code, runs.get(number, ()), text))

    def patch(node: ast.AST, new: str, what: str) -> None:
        """Replace one node's source segment (single line only)."""
        if node.lineno != node.end_lineno:  # type: ignore[attr-defined]
            return
        line = lines[node.lineno - 1]  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        add(node.lineno, line[:start] + new + line[end:], what)  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if id(node) in in_fstring:
            continue  # positions inside f-strings are not the parts' own
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            flipped = ast.Compare(node.left, [_FLIP[type(node.ops[0])]()], node.comparators)
            patch(node, ast.unparse(flipped), f"{ast.unparse(node)} -> {ast.unparse(flipped)}")
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            swapped = ast.BoolOp(other, node.values)
            patch(node, f"({ast.unparse(swapped)})", f"{type(node.op).__name__} -> other")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            patch(node, f"({ast.unparse(node.operand)})", f"drop not: {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            other = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            if isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                continue  # string concatenation
            new = ast.BinOp(node.left, other, node.right)
            patch(node, f"({ast.unparse(new)})", f"{ast.unparse(node)} -> {ast.unparse(new)}")
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                patch(node, str(not value), f"{value} -> {not value}")
            elif isinstance(value, int):
                patch(node, str(value + 1), f"{value} -> {value + 1}")
            elif isinstance(value, str) and "?" in value:
                # SQL, often written as adjacent literals over several lines:
                # each condition inside the quotes of one of its lines.
                for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                    line = lines[number - 1]
                    first, last = _quotes(line)
                    for m in _SQL_CONDITION.finditer(line):
                        if first < m.start() and m.end() < last:
                            changed = line[: m.start()] + f"({m.group(0)} OR 1)" + line[m.end() :]
                            add(number, changed, f"SQL: {m.group(0)} always true")
    return out


def _quotes(line: str) -> tuple[int, int]:
    """Where the string literals of a source line begin and end (-1, -1: none)."""
    spots = [i for i, c in enumerate(line) if c in "\"'"]
    return (spots[0], spots[-1]) if spots else (-1, -1)


def _cypher_mutants(module: str, path: str, source: str) -> list[Mutant]:
    out: list[Mutant] = []
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        code = line.split("//", 1)[0]
        if not re.search(r"\b(WHERE|AND|OR)\b", code):
            continue  # conditions only, not SET or RETURN expressions
        for m in _CYPHER_CONDITION.finditer(code):
            if code[: m.start()].endswith("reduce("):
                continue  # an accumulator's start, not a condition
            changed = line[: m.start()] + f"({m.group(0)} OR true)" + line[m.end() :]
            text = "".join([*lines[: number - 1], changed, *lines[number:]])
            out.append(
                Mutant(
                    module,
                    path,
                    number,
                    f"{m.group(0)} always true",
                    line.strip(),
                    (),
                    text,
                )
            )
    return out


def mutants(module: str) -> list[Mutant]:
    found: list[Mutant] = []
    for pattern in TARGETS[module]:
        for file in sorted(ROOT.glob(pattern)):
            path = file.relative_to(ROOT).as_posix()
            text = file.read_text(encoding="utf-8")
            make = _cypher_mutants if path.endswith(".cypher") else _python_mutants
            found += make(module, path, text)
    return found


def sample(module: str, size: int, seed: int) -> list[Mutant]:
    """``size`` mutants of ``module``, the same ones for the same seed and
    tree whichever other modules are asked for."""
    pool = mutants(module)
    rng = random.Random(f"{seed}:{module}")
    return rng.sample(pool, min(size, len(pool))) if size else pool


# --- The trace pass ----------------------------------------------------------

#: Runs in the test process (from the plugin) and, through a
#: ``sitecustomize``, in every Python process a test starts: coverage of
#: ``sessions_graph`` by line, each line under the tests that ran it (the
#: test's id is the coverage context; a process started by a test finds it in
#: its environment), and the Cypher files each test read.
_TRACER = r"""
import atexit, json, os, pathlib

import coverage

_OUT = os.environ["SG_MUTATION_TRACE_DIR"]
_test = [os.environ.get("SG_MUTATION_TEST", "")]
_cypher = {}
_read_text = pathlib.Path.read_text


def _reading(self, *args, **kwargs):
    if self.suffix == ".cypher":
        name = self.with_suffix("").as_posix().split("/cypher/", 1)[-1]
        _cypher.setdefault(_test[0], set()).add(name)
    return _read_text(self, *args, **kwargs)


def switch(test):
    _test[0] = test
    cov.switch_context(test)


def dump(extra=None):
    data = {"cypher": {t: sorted(n) for t, n in _cypher.items()}, **(extra or {})}
    name = f"{os.getpid()}-{'end' if extra else 'exit'}.json"
    with open(os.path.join(_OUT, name), "w") as f:
        json.dump(data, f)


def _exiting(code):
    # python -m sessions_graph ends with os._exit, which skips atexit.
    cov.stop()
    cov.save()
    dump()
    _exit(code)


pathlib.Path.read_text = _reading
_exit = os._exit
os._exit = _exiting
cov = coverage.Coverage(
    data_file=os.path.join(_OUT, ".coverage"),
    data_suffix=True,
    auto_data=True,
    source=[os.path.join(os.environ["SG_MUTATION_ROOT"], "sessions_graph")],
    config_file=False,
)
cov.start()
cov.switch_context(_test[0])
atexit.register(dump)
"""

_SITECUSTOMIZE = "import os\nif os.environ.get('SG_MUTATION_TRACE_DIR'):\n    import _sg_tracer\n"

_PLUGIN = r"""
import os, sys, time
import pytest
import _sg_tracer

_durations = {}
_failed = set()
_skipped = set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ["SG_MUTATION_TEST"] = item.nodeid
    _sg_tracer.switch(item.nodeid)
    cypher = sys.modules.get("sessions_graph.cypher")
    if cypher is not None:  # loads are cached: trace each test's own
        cypher.load.cache_clear()
    started = time.monotonic()
    yield
    _durations[item.nodeid] = time.monotonic() - started
    _sg_tracer.switch("")


def pytest_runtest_logreport(report):
    if report.failed:
        _failed.add(report.nodeid)
    elif report.skipped:
        _skipped.add(report.nodeid)


def pytest_sessionfinish(session):
    ended = {"failed": sorted(_failed), "skipped": sorted(_skipped)}
    _sg_tracer.dump({"durations": _durations, **ended})
"""


@dataclass
class Trace:
    #: path -> line -> the tests that ran it (in the test pool's numbering).
    lines: dict[str, dict[int, set[str]]]
    cypher: dict[str, set[str]]  # Cypher file -> the tests that read it
    durations: dict[str, float]
    passed: set[str]

    def tests_for(self, mutant: Mutant) -> list[str]:
        if mutant.path.endswith(".cypher"):
            name = mutant.path.removeprefix("cypher/").removesuffix(".cypher")
            wanted = self.cypher.get(name, set())
        else:
            by_line = self.lines.get(mutant.path, {})
            numbers = mutant.lines or by_line.keys()
            if any("" in by_line.get(n, ()) for n in numbers):
                # Run at import (in the test process that is while collecting,
                # outside any test): what it sets up serves the whole file.
                numbers = by_line.keys()
            wanted = set().union(*(by_line.get(n, set()) for n in numbers))
        return sorted(wanted & self.passed, key=lambda t: self.durations[t])


def _pool_files() -> list[str]:
    found = {p for g in TEST_POOL for p in ROOT.glob(g)}
    found -= {p for g in TEST_EXCLUDED for p in ROOT.glob(g)}
    return sorted(p.relative_to(ROOT).as_posix() for p in found)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _base_digest() -> str:
    """What every test's trace depends on: the code, the Cypher, the tests'
    helpers (conftest, harnesses, fixtures) and the tracer. A change to one
    test file only retraces that file (``load_trace``)."""
    digest = hashlib.sha256((_TRACER + _PLUGIN + _SITECUSTOMIZE).encode())
    tests = set(_pool_files())
    for folder in ("sessions_graph", "cypher", "tests"):
        for file in sorted((ROOT / folder).rglob("*")):
            path = file.relative_to(ROOT).as_posix()
            if file.is_file() and "__pycache__" not in file.parts and path not in tests:
                digest.update(path.encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def _copy_tree() -> Path:
    work = Path(tempfile.mkdtemp(prefix="sg-mutation-"))
    # bench/ too: some tests drive a benchmark's corpus (test_inject_quality).
    for name in ("sessions_graph", "cypher", "tests", "bench", "pyproject.toml"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, work / name)
    return work


def _env(work: Path, extra: Path | None = None) -> dict[str, str]:
    path = [str(work), *([str(extra)] if extra else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONDONTWRITEBYTECODE": "1"}
    return {k: v for k, v in env.items() if not k.startswith("MEMGRAPH_")}


def trace(copies: list[Path], files: list[str]) -> Trace:
    """Run the test files once, split over the copies, with the tracer on."""
    files = sorted(files, key=lambda f: -(ROOT / f).stat().st_size)
    shares = [files[i :: len(copies)] for i in range(len(copies))]
    # pytest given no file would run every test: fewer files, fewer copies.
    copies, shares = copies[: len(files)], shares[: len(files)]
    runs = []
    for work, share in zip(copies, shares, strict=True):
        helpers = work / "_trace"
        out = helpers / "out"
        out.mkdir(parents=True)
        (helpers / "_sg_tracer.py").write_text(_TRACER)
        (helpers / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        (helpers / "_sg_plugin.py").write_text(_PLUGIN)
        env = {
            **_env(work, helpers),
            "SG_MUTATION_ROOT": str(work),
            "SG_MUTATION_TRACE_DIR": str(out),
        }
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        runs.append(
            subprocess.Popen(
                [*command, "-p", "_sg_plugin", *share],
                cwd=work,
                env=env,
                stdout=(helpers / "log").open("wb"),
                stderr=subprocess.STDOUT,
            )
        )
    for work, run in zip(copies, runs, strict=True):
        # pytest's own exit codes: 0 all passed, 1 some failed; else it broke.
        if run.wait() not in (0, 1) or not list((work / "_trace" / "out").glob("*-end.json")):
            log = (work / "_trace" / "log").read_text(errors="replace")
            raise SystemExit(f"the trace run broke (exit {run.returncode}):\n{log[-3000:]}")
    from coverage import CoverageData  # the dev extra: only this pass needs it

    lines: dict[str, dict[int, set[str]]] = {}
    cypher: dict[str, set[str]] = {}
    durations: dict[str, float] = {}
    failed: set[str] = set()
    skipped: set[str] = set()
    for work in copies:
        out = work / "_trace" / "out"
        for dump in out.glob("*.json"):
            data = json.loads(dump.read_text())
            for test, names in data["cypher"].items():
                for name in names:
                    cypher.setdefault(name, set()).add(test)
            durations.update(data.get("durations", {}))
            failed.update(data.get("failed", []))
            skipped.update(data.get("skipped", []))
        for part in out.glob(".coverage.*"):
            measured = CoverageData(basename=str(part))
            measured.read()
            for file in measured.measured_files():
                path = Path(file).relative_to(work).as_posix()
                by_line = lines.setdefault(path, {})
                for number, tests in measured.contexts_by_lineno(file).items():
                    by_line.setdefault(number, set()).update(tests)
        shutil.rmtree(work / "_trace")
    passed = set(durations) - failed - skipped
    if failed:
        print(f"{len(failed)} tests fail on the unchanged tree, left out:", file=sys.stderr)
        for test in sorted(failed):
            print(f"  {test}", file=sys.stderr)
    return Trace(lines, cypher, durations, passed)


def load_trace(copies: list[Path], retrace: bool) -> Trace:
    """The trace of this tree: from the cache, with the test files changed
    since traced again, else traced now; cached for the next run."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sessions-graph"
    path = cache / f"mutation-trace-{_base_digest()}.json"
    pool = {f: _file_digest(ROOT / f) for f in _pool_files()}
    old = Trace({}, {}, {}, set())
    known: dict[str, str] = {}
    if path.exists() and not retrace:
        data = json.loads(path.read_text())
        tests = data["tests"]
        old = Trace(
            {
                file: {int(n): {tests[i] for i in ids} for n, ids in by_line.items()}
                for file, by_line in data["lines"].items()
            },
            {name: {tests[i] for i in ids} for name, ids in data["cypher"].items()},
            data["durations"],
            set(data["passed"]),
        )
        known = data["files"]
    stale = sorted(f for f, digest in pool.items() if known.get(f) != digest)
    if not stale and set(known) == set(pool):
        return old
    started = time.monotonic()
    new = trace(copies, stale) if stale else Trace({}, {}, {}, set())
    print(f"trace: {len(stale)} test files in {time.monotonic() - started:.0f} s", file=sys.stderr)

    def kept(test: str) -> bool:
        """A test of a file that is still there unchanged, or "" (at import)."""
        file = test.split("::", 1)[0]
        return not test or (file in pool and file not in stale)

    def merged(file: str) -> dict[int, set[str]]:
        before, now = old.lines.get(file, {}), new.lines.get(file, {})
        return {
            n: {t for t in before.get(n, set()) if kept(t)} | now.get(n, set())
            for n in {*before, *now}
        }

    found = Trace(
        {file: merged(file) for file in {*old.lines, *new.lines}},
        {
            name: {t for t in old.cypher.get(name, set()) if kept(t)} | new.cypher.get(name, set())
            for name in {*old.cypher, *new.cypher}
        },
        {**{t: d for t, d in old.durations.items() if kept(t)}, **new.durations},
        {t for t in old.passed if kept(t)} | new.passed,
    )
    tests = sorted(found.durations)
    index = {t: i for i, t in enumerate(tests)}

    def ids(group: set[str]) -> list[int]:
        return sorted(index[t] for t in group if t in index)

    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "files": pool,
                "tests": tests,
                "lines": {
                    file: {n: ids(group) for n, group in by_line.items()}
                    for file, by_line in found.lines.items()
                },
                "cypher": {name: ids(group) for name, group in found.cypher.items()},
                "durations": found.durations,
                "passed": sorted(found.passed),
            }
        )
    )
    return found


# --- Running the mutants -----------------------------------------------------


def _run(work: Path, mutant: Mutant, tests: list[str], budget: float) -> bool:
    """Whether ``tests`` catch ``mutant`` (run in ``work``)."""
    if not tests:
        return False  # nothing executes it
    target = work / mutant.path
    original = target.read_text(encoding="utf-8")
    target.write_text(mutant.text, encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests],
            cwd=work,
            env=_env(work),
            capture_output=True,
            timeout=budget,
        )
        return done.returncode != 0
    except subprocess.TimeoutExpired:
        return True
    finally:
        target.write_text(original, encoding="utf-8")


def _within(tests: list[str], durations: dict[str, float], budget: float) -> list[str]:
    """The first of ``tests`` (fastest first) that fit in ``budget`` seconds, at least one."""
    if not budget:
        return tests
    chosen: list[str] = []
    spent = 0.0
    for test in tests:
        spent += durations[test]
        if chosen and spent > budget:
            break
        chosen.append(test)
    return chosen


def equivalents() -> dict[tuple[str, str, str], str]:
    """The survivors judged equivalent: (path, what, code) -> why.

    The file holds one entry per survivor, a header line
    ``path:line: what`` then indented ``code:`` and ``why:`` lines."""
    found: dict[tuple[str, str, str], str] = {}
    if not EQUIVALENT.exists():
        return found
    entry: list[str] = []
    for raw in [*EQUIVALENT.read_text(encoding="utf-8").splitlines(), ""]:
        if raw.startswith("#"):
            continue
        if raw and raw[0].isspace():
            entry.append(raw.strip())
            continue
        if entry:
            path, _, what = entry[0].split(":", 2)
            fields = dict(e.split(": ", 1) for e in entry[1:])
            found[(path, what.strip(), fields["code"])] = fields["why"]
        entry = [raw] if raw else []
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=20, help="mutants per module (0: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--fresh-from", type=int, metavar="SEED", help="leave out what SEED's sample holds"
    )
    parser.add_argument("--module", action="append", choices=sorted(TARGETS))
    parser.add_argument("--retrace", action="store_true", help="ignore a cached trace")
    parser.add_argument(
        "--budget",
        type=float,
        default=BUDGET,
        help="traced seconds of tests per mutant, fastest first (0: no limit)",
    )
    args = parser.parse_args()
    modules = args.module or list(TARGETS)
    # Stopped from outside: end as on ^C, so that the copies are removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    chosen: list[Mutant] = []
    for module in modules:
        if args.fresh_from is None:
            chosen += sample(module, args.sample, args.seed)
            continue
        taken = {m.key for m in sample(module, args.sample, args.fresh_from)}
        rest = [m for m in mutants(module) if m.key not in taken]
        rng = random.Random(f"{args.seed}:{module}")
        chosen += rng.sample(rest, min(args.sample, len(rest))) if args.sample else rest

    started = time.monotonic()
    copies = [_copy_tree() for _ in range(args.workers)]
    try:
        found = load_trace(copies, args.retrace)
        traced = time.monotonic() - started
        with ThreadPoolExecutor(args.workers) as pool:
            free = list(copies)

            def job(mutant: Mutant) -> tuple[Mutant, bool]:
                covering = found.tests_for(mutant)
                tests = _within(covering, found.durations, args.budget)
                timeout = TIMEOUT_SLACK + 3 * sum(found.durations[t] for t in tests)
                work = free.pop()
                try:
                    killed = _run(work, mutant, tests, timeout)
                finally:
                    free.append(work)
                # Progress on stderr, so that a long run shows where it is.
                state = "killed" if killed else "SURVIVED" if tests else "UNTESTED"
                ran = (
                    f"{len(tests)} of {len(covering)}" if len(tests) < len(covering) else len(tests)
                )
                print(
                    f"{state:8} {mutant.path}:{mutant.line}: {mutant.what} ({ran} tests)",
                    file=sys.stderr,
                )
                return mutant, killed

            results = list(pool.map(job, chosen))
    finally:
        for copy in copies:
            shutil.rmtree(copy, ignore_errors=True)

    judged = equivalents()
    for module in modules:
        mine = [(m, killed) for m, killed in results if m.module == module]
        if not mine:
            continue
        same = sum(1 for m, killed in mine if not killed and m.key in judged)
        killed = sum(1 for _, k in mine if k)
        total = len(mine) - same
        note = f"  ({same} equivalent left out)" if same else ""
        print(f"{module:10} {killed:3d}/{total:<3d} {killed / max(total, 1):.2f}{note}")
    survivors = [m for m, killed in results if not killed]
    for title, group in (
        ("survivors (missing tests)", [m for m in survivors if m.key not in judged]),
        ("equivalent survivors", [m for m in survivors if m.key in judged]),
    ):
        if group:
            print(f"\n{title}:")
            for m in group:
                print(f"  {m.module}: {m.path}:{m.line}: {m.what}")
                print(f"      {m.code}")
                if m.key in judged:
                    print(f"      why: {judged[m.key]}")
    print(
        f"\n{len(results)} mutants in {time.monotonic() - started:.0f} s"
        f" ({traced:.0f} s of it the trace)"
    )


if __name__ == "__main__":
    main()
