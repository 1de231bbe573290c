"""Make the injection benchmark's corpus: multi-session coding work done by
the real Claude Code and Codex CLIs, with our hooks and MCP server live.

    CLAUDE_CODE_BIN=... CODEX_BIN=... PYTHONPATH=$PWD python bench/inject_corpus.py

Both clients run against scripted model APIs on loopback
(tests/claude_harness.py, tests/codex_harness.py) in one scratch home that
they share with one store, so each client's hooks inject what the other
recorded, as on a machine where a user runs both. Three projects, two of
them called ``api`` (``w1/clientA/api`` and ``w2/clientB/api``, each with its
own ``origin`` remote) and one without a remote (``w1/tools/billing``).
Each coding session writes or edits files, runs tests in the shell (some
fail) and ends with one planted decision sentence; there are small-talk
sessions ("hello", "ok") and sessions that call our MCP ``recall`` tool, so
our injected blocks and our tool's results land in the transcripts.

The transcripts are written gzipped to ``bench/data/inject/`` (Claude Code's
``<project-dir>/<session>.jsonl``, Codex's rollouts), with the scratch home
made ``/home/alice``, and ``manifest.json``: the projects, which corpus
session ran where, the planted decisions, and the later sessions (probes)
with their prompts and the decisions each needs. Everything is scripted;
only the ids and times the clients make differ between runs.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))

from claude_harness import ClaudeCode, FakeAnthropic, find_claude, text, tool_use  # noqa: E402
from codex_harness import (  # noqa: E402
    Codex,
    FakeResponses,
    custom_tool_call,
    find_codex,
    function_call,
    message,
    tool_search_call,
)

OUT = HERE / "data" / "inject"
#: What the scratch home becomes in the stored transcripts.
HOME = "/home/alice"
#: The scratch directory's prefix.
PREFIX = "inject-corpus-"

#: name -> (path under the home, origin remote or None)
PROJECTS: dict[str, tuple[str, str | None]] = {
    "clientA-api": ("work/w1/clientA/api", "git@github.com:clientA/api.git"),
    "clientB-api": ("work/w2/clientB/api", "https://github.com/clientB/api.git"),
    "billing": ("work/w1/tools/billing", None),
}

#: The planted decisions: id -> (project, the exact sentence the model says).
DECISIONS: dict[str, tuple[str, str]] = {
    "a-queue": ("clientA-api", "We'll use RQ for the job queue."),
    "a-grpc": ("clientA-api", "Pin grpcio to 1.62 for arm64."),
    "b-queue": ("clientB-api", "We'll use Celery with the Postgres broker for the job queue."),
    "b-limits": ("clientB-api", "Rate limits live in the gateway config, not in the app code."),
    "c-cents": ("billing", "Store invoice amounts as integer cents and round only at display."),
    "c-dates": ("billing", "The CSV export writes dates as ISO 8601 with a UTC offset."),
}

#: Later sessions: the project, the client, and each prompt with the
#: decisions it needs (none for small talk).
PROBES: list[dict[str, Any]] = [
    {
        "project": "clientA-api",
        "client": "claude-code",
        "prompts": [
            ["hello", []],
            ["Which library did we choose for the job queue in the api?", ["a-queue"]],
            ["What was the job queue decision for the api?", ["a-queue"]],
            ["The arm64 build fails on grpcio again: which grpcio version did we pin?", ["a-grpc"]],
            ["Where do we enforce the rate limits of the public endpoints?", []],
            ["ok thanks", []],
        ],
    },
    {
        "project": "clientB-api",
        "client": "codex",
        "prompts": [
            ["What did we settle on for the job queue backend?", ["b-queue"]],
            ["Where do the rate limits of the public endpoints live?", ["b-limits"]],
        ],
    },
    {
        "project": "billing",
        "client": "claude-code",
        "prompts": [
            ["How do we store and round invoice amounts?", ["c-cents"]],
            ["Which date format does the invoice CSV export write?", ["c-dates"]],
        ],
    },
    {
        "project": "billing",
        "client": "codex",
        "prompts": [
            ["go on", []],
            ["Which sandbox mode and filesystem permissions do the tests run with?", []],
            ["Remind me how invoice amounts are stored in billing.", ["c-cents"]],
        ],
    },
]


def _say(key: str, before: str = "", after: str = "") -> str:
    """An answer holding decision ``key``'s sentence whole."""
    return " ".join(part for part in (before, DECISIONS[key][1], after) if part)


def _setup(home: Path) -> dict[str, Path]:
    """The three projects, each a git root (with its remote) holding a small
    package and a test."""
    roots = {}
    for name, (rel, remote) in PROJECTS.items():
        root = home / rel
        (root / ".git").mkdir(parents=True, exist_ok=True)
        config = "[core]\n\trepositoryformatversion = 0\n"
        if remote:
            config += f'[remote "origin"]\n\turl = {remote}\n'
        (root / ".git" / "config").write_text(config)
        roots[name] = root
    api_test = (
        "import unittest\n\n\nclass JobsTest(unittest.TestCase):\n"
        "    def test_backend(self):\n        from jobs import BACKEND\n"
        '        self.assertEqual(BACKEND, "redis")\n\n\n'
        'if __name__ == "__main__":\n    unittest.main()\n'
    )
    for name in ("clientA-api", "clientB-api"):
        (roots[name] / "test_jobs.py").write_text(api_test)
    (roots["clientA-api"] / "requirements.txt").write_text("fastapi==0.110\ngrpcio>=1.60\n")
    (roots["clientB-api"] / "limits.py").write_text("LIMITS = {}\n")
    (roots["billing"] / "test_money.py").write_text(
        "import unittest\n\n\nclass MoneyTest(unittest.TestCase):\n"
        "    def test_cents(self):\n        from money import to_cents\n"
        '        self.assertEqual(to_cents("10.005"), 1001)\n\n\n'
        'if __name__ == "__main__":\n    unittest.main()\n'
    )
    return roots


def _add_patch(path: str, body: str) -> str:
    lines = "".join(f"+{line}\n" for line in body.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def _claude_sessions(
    claude: ClaudeCode, api: FakeAnthropic, roots: dict[str, Path], part: int
) -> list[tuple[str, str]]:
    """Claude Code's sessions of part 1 or 2 (run in between Codex's), as
    (project, prompt)."""
    allowed = ("--allowedTools", "Read Write Edit Bash mcp__sessions-graph__recall")
    a, billing = roots["clientA-api"], roots["billing"]
    done: list[tuple[str, str]] = []

    def run(project: str, prompt: str) -> None:
        claude.run(prompt, roots[project], *allowed)
        done.append((project, prompt))

    if part == 1:
        api.then(
            text("I'll add a jobs module."),
            tool_use("Write", {"file_path": str(a / "jobs.py"), "content": 'BACKEND = "rq"\n'}),
        )
        api.then(tool_use("Bash", {"command": "python3 -m unittest -q test_jobs"}))
        api.then(text(_say("a-queue", "The test expects redis, the module says rq.")))
        run("clientA-api", "Add a background job queue to the api and run the tests.")

        api.then(text("Hi! What are we working on today?"))
        run("clientA-api", "hello")

        api.then(tool_use("Read", {"file_path": str(a / "requirements.txt")}))
        api.then(
            tool_use(
                "Edit",
                {
                    "file_path": str(a / "requirements.txt"),
                    "old_string": "grpcio>=1.60",
                    "new_string": "grpcio==1.62.2",
                },
            )
        )
        api.then(tool_use("Bash", {"command": "grep -n grpcio requirements.txt"}))
        api.then(text(_say("a-grpc", after="Later wheels fail to build on the arm64 runners.")))
        run("clientA-api", "The arm64 CI build fails installing grpcio; fix the requirements.")

        api.then(
            tool_use("Write", {"file_path": str(a / "health.py"), "content": _HEALTH_PY}),
        )
        api.then(
            tool_use("Bash", {"command": "python3 -c 'import health; print(health.health())'"})
        )
        api.then(text("Added a /healthz handler that returns ok."))
        run("clientA-api", "Add a health check endpoint to the api.")

        api.then(
            tool_use("Write", {"file_path": str(a / "README.md"), "content": _README_MD}),
        )
        api.then(text("The README now says how to run the server and the tests."))
        run("clientA-api", "Write a README section on running the server locally.")
    else:
        api.then(
            tool_use("Write", {"file_path": str(billing / "money.py"), "content": _MONEY_PY}),
        )
        api.then(tool_use("Bash", {"command": "python3 -m unittest -q test_money"}))
        api.then(text(_say("c-cents", "The rounding test passes now.")))
        run("billing", "Invoice totals round wrong; fix the rounding in billing and run the tests.")

        api.then(tool_use("mcp__sessions-graph__recall", {"query": "job queue decision api"}))
        api.then(text("From the recall: RQ was chosen for the job queue of this api."))
        run("clientA-api", "What did we decide about the job queue?")

        api.then(text("OK."))
        run("clientA-api", "ok")

        api.then(text("Hello again."))
        run("billing", "hi")
    return done


_MONEY_PY = (
    "from decimal import ROUND_HALF_UP, Decimal\n\n\n"
    "def to_cents(amount):\n"
    '    return int((Decimal(amount) * 100).quantize(Decimal("1"), ROUND_HALF_UP))\n'
)
_HEALTH_PY = 'def health():\n    return {"status": "ok"}\n'
_README_MD = "# api\n\nRun `uvicorn app:app --reload`; test with `python3 -m unittest`.\n"
_LOGGING_PY = (
    "import logging\n\n\ndef log_request(method, path, status):\n"
    '    logging.info("%s %s %s", method, path, status)\n'
)
_CURRENCY_PY = 'DEFAULT_CURRENCY = "EUR"\n'
_LISTING_PY = (
    "PAGE_SIZE = 50\n\n\ndef page(rows, n):\n    return rows[n * PAGE_SIZE : (n + 1) * PAGE_SIZE]\n"
)
_EXPORT_PY = (
    "import csv\n\n\ndef export(rows, fh):\n"
    "    writer = csv.writer(fh)\n"
    "    for row in rows:\n"
    '        writer.writerow([row["id"], row["date"].isoformat(), row["cents"]])\n'
)


def _codex_sessions(
    codex: Codex, api: FakeResponses, roots: dict[str, Path], part: int
) -> list[tuple[str, str]]:
    """Codex's sessions of part 1 or 2, as (project, prompt)."""
    done: list[tuple[str, str]] = []

    def run(project: str, prompt: str) -> None:
        codex.run(prompt, roots[project])
        done.append((project, prompt))

    if part == 1:
        api.then(
            message("I'll add a jobs module."),
            custom_tool_call("apply_patch", _add_patch("jobs.py", 'BACKEND = "celery"')),
        )
        api.then(function_call("exec_command", {"cmd": "python3 -m unittest -q test_jobs"}))
        api.then(message(_say("b-queue", "The test still expects redis.")))
        # The very prompt Claude Code was given in the other api project.
        run("clientB-api", "Add a background job queue to the api and run the tests.")

        api.then(message("Hello! What's next?"))
        run("clientB-api", "hello")

        patch = (
            "*** Begin Patch\n*** Update File: limits.py\n@@\n-LIMITS = {}\n"
            "+LIMITS = {}  # read from the gateway config\n*** End Patch\n"
        )
        api.then(custom_tool_call("apply_patch", patch))
        api.then(function_call("exec_command", {"cmd": "grep -rn LIMITS ."}))
        api.then(message(_say("b-limits", after="The gateway allows 100 requests a minute a key.")))
        run("clientB-api", "Add rate limiting for the public endpoints.")

        api.then(custom_tool_call("apply_patch", _add_patch("logging_mw.py", _LOGGING_PY)))
        api.then(function_call("exec_command", {"cmd": "python3 -c 'import logging_mw'"}))
        api.then(message("Requests are logged with their method, path and status now."))
        run("clientB-api", "Add request logging middleware.")
    else:
        api.then(custom_tool_call("apply_patch", _add_patch("export.py", _EXPORT_PY)))
        api.then(function_call("exec_command", {"cmd": "python3 -m unittest -q test_money"}))
        api.then(message(_say("c-dates", "The export is in export.py.")))
        run("billing", "Add a CSV export of invoices to billing.")

        api.then(tool_search_call("recall past sessions memory"))
        api.then(
            function_call("recall", {"query": "rate limits decision"}, None, "mcp__sessions_graph")
        )
        api.then(message("From the recall: the rate limits are in the gateway config."))
        run("clientB-api", "What did we decide about rate limiting?")

        api.then(message("You're welcome."))
        run("billing", "thanks, that's all for now")

        api.then(custom_tool_call("apply_patch", _add_patch("currency.py", _CURRENCY_PY)))
        api.then(function_call("exec_command", {"cmd": "python3 -m unittest -q test_money"}))
        api.then(message("Invoices carry a currency code now, EUR by default."))
        run("billing", "Add a currency field to invoices.")

        api.then(custom_tool_call("apply_patch", _add_patch("listing.py", _LISTING_PY)))
        api.then(function_call("exec_command", {"cmd": "python3 -c 'import listing'"}))
        api.then(message("The invoice listing reads one page of 50 at a time."))
        run("billing", "The invoice listing is slow; page it.")
    return done


def _scrub(value: str, home: Path) -> str:
    """The scratch home's paths as ``/home/alice``'s (also in Claude Code's
    project-directory spelling, and cut short inside quoted excerpts)."""
    value = value.replace(str(home), HOME)
    value = value.replace(re.sub(r"[^A-Za-z0-9]", "-", str(home)), HOME.replace("/", "-"))
    cut = re.escape(str(home.parent.parent / PREFIX))  # "/tmp/inject-corpus-x…"
    return re.sub(cut + r"[A-Za-z0-9_/]*", HOME, value)


def _session_of(path: Path) -> tuple[str, str]:
    """(session id, cwd) of a transcript, from its entries."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            entry = json.loads(line)
            payload = entry.get("payload") or {}
            if entry.get("type") == "session_meta":
                return payload["id"], payload["cwd"]
            if entry.get("sessionId") and entry.get("cwd"):
                return entry["sessionId"], entry["cwd"]
    raise SystemExit(f"no session in {path}")


def main() -> None:
    claude_bin, codex_bin = find_claude(), find_codex()
    if not claude_bin or not codex_bin:
        raise SystemExit("set CLAUDE_CODE_BIN and CODEX_BIN (the real clients)")
    with tempfile.TemporaryDirectory(prefix=PREFIX) as tmp:
        root = Path(tmp)
        anthropic, responses = FakeAnthropic().start(), FakeResponses().start()
        try:
            # One root: the same home, config, state and store for both.
            claude = ClaudeCode(claude_bin, root, anthropic)
            claude.env["MCP_CONNECTION_NONBLOCKING"] = "0"
            codex = Codex(codex_bin, root, responses)
            claude.install_hooks()
            codex.install_hooks()
            # Codex starts MCP servers with only the variables named: the
            # server must run this tree's code, as the hooks do.
            config = codex.config.read_text()
            codex.config.write_text(
                config.replace("env_vars = [\n", 'env_vars = [\n  "PYTHONPATH",\n', 1)
            )
            roots = _setup(claude.home)
            runs = []
            for part in (1, 2):
                runs += _claude_sessions(claude, anthropic, roots, part)
                runs += _codex_sessions(codex, responses, roots, part)
        finally:
            anthropic.stop()
            responses.stop()
        home = claude.home
        claude_files = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
        codex_files = codex.rollouts()
        if len(claude_files) + len(codex_files) != len(runs):
            raise SystemExit(f"{len(runs)} sessions run, {claude_files + codex_files} written")
        if OUT.exists():
            shutil.rmtree(OUT)
        sessions = []
        for client, files in (("claude-code", claude_files), ("codex", codex_files)):
            for path in files:
                rel = path.relative_to(home)
                target = OUT / _scrub(str(rel), home)
                target = target.with_name(target.name + ".gz")
                target.parent.mkdir(parents=True, exist_ok=True)
                raw = _scrub(path.read_text(encoding="utf-8"), home).encode()
                target.write_bytes(gzip.compress(raw, mtime=0))
                session_id, cwd = _session_of(path)
                project = next(n for n, r in roots.items() if Path(cwd) == r)
                sessions.append(
                    {
                        "session_id": session_id,
                        "client": client,
                        "project": project,
                        "file": str(target.relative_to(OUT)),
                    }
                )
    manifest = {
        "home": HOME,
        "projects": {
            name: {"path": f"{HOME}/{rel}", "remote": remote}
            for name, (rel, remote) in PROJECTS.items()
        },
        "decisions": {k: {"project": p, "text": t} for k, (p, t) in DECISIONS.items()},
        "sessions": sessions,
        "probes": PROBES,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"{len(sessions)} sessions, {size / 1024:.0f} KiB in {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
