"""``pytest -q`` says why tests were skipped, one line per reason (README, Tests).

A real pytest run in a subprocess, over test files that skip for two reasons
in the ways this suite does: a fixture calling ``pytest.skip`` (as the Claude
Code and Codex harnesses do, in several files) and a ``skipif`` mark (as the
Memgraph parameter does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = """
import pytest

@pytest.fixture
def agent():
    pytest.skip("the agent CLI is not installed")
"""

FIRST = """
import pytest

def test_one(agent): pass
def test_two(agent): pass

@pytest.mark.skipif(True, reason="no server configured")
def test_server(): pass

def test_runs(): pass
"""

SECOND = """
def test_three(agent): pass
"""


def test_each_skip_reason_is_one_line_with_its_count(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_first.py").write_text(FIRST)
    (tmp_path / "test_second.py").write_text(SECOND)
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "skip_reasons", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines.count("3 skipped: the agent CLI is not installed") == 1, result.stdout
    assert lines.count("1 skipped: no server configured") == 1, result.stdout
    assert sum("skipped: " in line and "passed" not in line for line in lines) == 2, result.stdout
