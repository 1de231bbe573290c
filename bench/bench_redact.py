"""Secret redaction: what it catches, what it costs, and that its cost is linear.

    python bench/bench_redact.py [--runs 30]

1. Probes: the realistic secrets of ``tests/redact_probes.py``, caught / total.
2. Cost per action, as the hook path pays it: import, the first text (which
   compiles the rules its hints call for) in a fresh process, and the median
   over ``--runs`` of texts of 1 KB, 8 KB and 200 KB (this package's own
   source, as a tool result and as a Write tool call, which is JSON-escaped
   and so also goes through the decoded view).
Times are CPU time (``process_time``), so that a loaded machine's waiting
does not count; a fresh process needs the package's bytecode compiled
(``python -m compileall sessions_graph``) to measure what an install pays.

3. Scaling: adversarial texts (one hint repeated, so that every position is a
   starting point for some rule) at 50,000 and 200,000 characters. Linear
   patterns take about 4x as long for 4x the text; the quadratic patterns this
   replaced took 16x (``"curl " * 40000`` took 121 s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def corpus(size: int) -> str:
    """``size`` characters of this package's source, repeated as needed."""
    text = "\n".join(p.read_text("utf-8") for p in sorted((ROOT / "sessions_graph").rglob("*.py")))
    return (text * (size // len(text) + 1))[:size]


def median_ms(func, arg: str, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.process_time()
        func(arg)
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def fresh_process_ms(text: str) -> tuple[float, float]:
    """(import, first redact) in a new interpreter, as a hook process pays them."""
    code = (
        "import sys, time, json\n"
        "t = time.process_time()\n"
        "from sessions_graph.redact import redact\n"
        "i = time.process_time()\n"
        "redact(sys.stdin.read())\n"
        "e = time.process_time()\n"
        "print(json.dumps([(i - t) * 1000, (e - i) * 1000]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, check=True
    )
    first_import, first_call = json.loads(out.stdout)
    return first_import, first_call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    from redact_probes import ADVERSARIAL, PROBES

    from sessions_graph.redact import redact

    caught = sum(secret not in redact(text) for _, text, secret in PROBES)
    print(f"probes caught: {caught}/{len(PROBES)}")

    print(
        "\ncost per action (median ms)     as output   as a Write call"
        "   fresh process (import + first)"
    )
    for size in (1_000, 8_000, 200_000):
        text = corpus(size)
        call = json.dumps({"content": text, "file_path": "/src/x.py"})
        imports = []
        firsts = []
        for _ in range(5):
            a, b = fresh_process_ms(call)
            imports.append(a)
            firsts.append(b)
        print(
            f"  {size:>7,} chars            {median_ms(redact, text, args.runs):8.2f}"
            f"   {median_ms(redact, call, args.runs):12.2f}"
            f"        {statistics.median(imports):.2f} + {statistics.median(firsts):.2f}"
        )

    print("\nscaling (ms at 50k chars, ms at 200k chars, ratio; linear ~4, quadratic ~16)")
    worst = 0.0
    for unit in ADVERSARIAL:
        small, large = ((unit * (n // len(unit) + 1))[:n] for n in (50_000, 200_000))
        a = median_ms(redact, small, 3)
        b = median_ms(redact, large, 3)
        worst = max(worst, b / a)
        print(f"  {unit!r:<28} {a:8.1f} {b:8.1f} {b / a:6.1f}")
    print(f"worst ratio: {worst:.1f}")


if __name__ == "__main__":
    main()
