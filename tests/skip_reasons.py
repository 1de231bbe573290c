"""``pytest -q`` ends with why tests were skipped: one line per reason.

pytest's own ``-rs`` prints a line per reason *and place* (a skip raised in a
fixture is reported once per test file), so "the Memgraph tests did not run"
would be dozens of lines. This groups every skip by its reason alone, with how
many tests it skipped, so that a run says at a glance what it could not test
here and why (the README promises it). Loaded by ``tests/conftest.py``.
"""

from __future__ import annotations

from collections import Counter

import pytest

_PREFIX = "Skipped: "


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test report gives, without pytest's prefix."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
    else:  # a skip some plugin reported in its own form
        message = str(longrepr)
    return message.removeprefix(_PREFIX).strip() or "no reason given"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After the run: ``N skipped: reason``, most skipped first."""
    reasons = Counter(
        skip_reason(report)
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report, pytest.TestReport)
    )
    if not reasons:
        return
    terminalreporter.section("skipped, by reason", sep="-")
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        terminalreporter.line(f"{count} skipped: {reason}")
