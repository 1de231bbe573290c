"""Mutation score of the modules that matter most: plant one small bug at a
time, run the tests that cover its module, count the bugs they catch.

    python bench/mutation.py [--sample 15] [--workers 2] [--seed 1] [--module recall ...]

Prints one line per module, ``module  killed/total  score``, then every
surviving mutant (file:line, what was changed) so that each can be judged:
a missing test, or a change that cannot alter behaviour (an equivalent).

Mutations (simple, as a developer's slip would be):
* Python: a comparison flipped (``==``/``!=``, ``<``/``<=``, ``>``/``>=``,
  ``in``/``not in``), ``and``/``or`` swapped, a ``not`` dropped, an integer
  constant off by one, ``True``/``False`` swapped, an arithmetic ``+``/``-``
  swapped.
* SQL inside Python strings and Cypher files: one condition made always
  true (``x = ?`` -> ``(x = ? OR 1)``, ``a.b = $c`` -> ``(a.b = $c OR true)``),
  which keeps the statement valid and its parameters in place.

Each worker runs in its own temporary copy of the tree; the working tree is
never touched. A mutant counts as killed when the covering tests fail or time
out. Targets are path globs that match both the single-file engines
(``engines/sqlite.py``) and the package layout (``engines/sqlite/*.py``).
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: module -> (source globs, covering test globs).
TARGETS: dict[str, tuple[list[str], list[str]]] = {
    "redact": (["sessions_graph/redact.py"], ["tests/test_redact*.py"]),
    "recall": (
        ["sessions_graph/recall/*.py"],
        [
            "tests/test_contract_guards.py",
            "tests/test_contract_recall.py",
            "tests/test_recall_layer.py",
            "tests/test_recall_fusion.py",
            "tests/test_recall_cli.py",
        ],
    ),
    "hooks": (
        ["sessions_graph/hooks/*.py"],
        ["tests/test_hooks_*.py", "tests/test_inject_floor.py", "tests/test_transcript_*.py"],
    ),
    "sqlite": (
        ["sessions_graph/engines/sqlite.py", "sessions_graph/engines/sqlite/*.py"],
        ["tests/test_contract_*.py", "tests/test_embedded_engine.py"],
    ),
    "memgraph": (
        ["sessions_graph/engines/memgraph.py", "sessions_graph/engines/memgraph/*.py"],
        ["tests/test_memgraph_*.py", "tests/test_cypher_user_scope.py"],
    ),
    "cypher": (
        ["cypher/**/*.cypher"],
        ["tests/test_cypher_user_scope.py", "tests/test_memgraph_*.py"],
    ),
    "reconcile": (
        ["sessions_graph/reconcile/*.py"],
        ["tests/test_reconcile*.py", "tests/test_contract_chunk_claims.py"],
    ),
    "query": (
        ["sessions_graph/query.py"],
        ["tests/test_query.py", "tests/test_contract_recall.py", "tests/test_contract_memories.py"],
    ),
}

#: Seconds one mutant's tests may take; longer counts as killed (a hang).
TIMEOUT = 300

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
_SQL_CONDITION = re.compile(r"\b([a-z_]+\.[a-z_]+|[a-z_]+) (=|<|<=|>|>=) (\?|[a-z_]+\.[a-z_]+)")
_CYPHER_CONDITION = re.compile(
    r"(\$?[a-z_]+(?:\.[a-z_]+)?) (=|<>|<|<=|>|>=|STARTS WITH|IN) (\$?[a-z_]+(?:\.[a-z_]+)?)"
)


@dataclass(frozen=True)
class Mutant:
    module: str
    path: str  # relative to the root
    line: int
    what: str
    text: str  # the whole mutated file


def _python_mutants(module: str, path: str, source: str) -> list[Mutant]:
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out: list[Mutant] = []

    def patch(node: ast.AST, new: str, what: str) -> None:
        """Replace one node's source segment (single line only)."""
        if node.lineno != node.end_lineno:  # type: ignore[attr-defined]
            return
        line = lines[node.lineno - 1]  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        changed = line[:start] + new + line[end:]
        text = "".join([*lines[: node.lineno - 1], changed, *lines[node.lineno :]])  # type: ignore[attr-defined]
        out.append(Mutant(module, path, node.lineno, what, text))  # type: ignore[attr-defined]

    for node in ast.walk(tree):
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
                for m in _SQL_CONDITION.finditer(value):
                    new = value[: m.start()] + f"({m.group(0)} OR 1)" + value[m.end() :]
                    patch(node, repr(new), f"SQL: {m.group(0)} always true")
    return out


def _cypher_mutants(module: str, path: str, source: str) -> list[Mutant]:
    out: list[Mutant] = []
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        code = line.split("//", 1)[0]
        if not re.search(r"\b(WHERE|AND|OR)\b", code):
            continue  # conditions only, not SET or RETURN expressions
        for m in _CYPHER_CONDITION.finditer(code):
            changed = line[: m.start()] + f"({m.group(0)} OR true)" + line[m.end() :]
            text = "".join([*lines[: number - 1], changed, *lines[number:]])
            out.append(Mutant(module, path, number, f"{m.group(0)} always true", text))
    return out


def mutants(module: str) -> list[Mutant]:
    sources, _ = TARGETS[module]
    found: list[Mutant] = []
    for pattern in sources:
        for file in sorted(ROOT.glob(pattern)):
            path = file.relative_to(ROOT).as_posix()
            text = file.read_text(encoding="utf-8")
            make = _cypher_mutants if path.endswith(".cypher") else _python_mutants
            found += make(module, path, text)
    return found


def tests_of(module: str) -> list[str]:
    files: set[str] = set()
    for pattern in TARGETS[module][1]:
        files.update(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern))
    return sorted(files)


def _copy_tree() -> Path:
    work = Path(tempfile.mkdtemp(prefix="sg-mutation-"))
    for name in ("sessions_graph", "cypher", "tests", "pyproject.toml"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, work / name)
    return work


def _run(work: Path, mutant: Mutant) -> bool:
    """Whether the covering tests catch ``mutant`` (run in ``work``)."""
    target = work / mutant.path
    original = target.read_text(encoding="utf-8")
    target.write_text(mutant.text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(work), "PYTHONDONTWRITEBYTECODE": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("MEMGRAPH_")}
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-x",
                "-p",
                "no:cacheprovider",
                *tests_of(mutant.module),
            ],
            cwd=work,
            env=env,
            capture_output=True,
            timeout=TIMEOUT,
        )
        return done.returncode != 0
    except subprocess.TimeoutExpired:
        return True
    finally:
        target.write_text(original, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=15, help="mutants per module (0: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--module", action="append", choices=sorted(TARGETS))
    args = parser.parse_args()

    rng = random.Random(args.seed)
    chosen: list[Mutant] = []
    for module in args.module or list(TARGETS):
        pool = mutants(module)
        chosen += rng.sample(pool, min(args.sample, len(pool))) if args.sample else pool

    copies = [_copy_tree() for _ in range(args.workers)]
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(args.workers) as pool:
            slots = {i: copies[i] for i in range(args.workers)}
            free = list(slots)

            def job(mutant: Mutant) -> tuple[Mutant, bool]:
                slot = free.pop()
                try:
                    killed = _run(slots[slot], mutant)
                finally:
                    free.append(slot)
                # Progress on stderr, so that a long run shows where it is.
                state = "killed" if killed else "SURVIVED"
                print(f"{state:8} {mutant.path}:{mutant.line}: {mutant.what}", file=sys.stderr)
                return mutant, killed

            results = list(pool.map(job, chosen))
    finally:
        for copy in copies:
            shutil.rmtree(copy, ignore_errors=True)

    for module in args.module or list(TARGETS):
        mine = [killed for m, killed in results if m.module == module]
        if mine:
            print(f"{module:10} {sum(mine):3d}/{len(mine):<3d} {sum(mine) / len(mine):.2f}")
    survivors = [m for m, killed in results if not killed]
    if survivors:
        print("\nsurvivors:")
        for m in survivors:
            print(f"  {m.module}: {m.path}:{m.line}: {m.what}")
    print(f"\n{len(results)} mutants in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
