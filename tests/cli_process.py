"""``sessions-graph`` as a real process, the way a user or cron runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "sessions_graph"]
#: The checkout the package under test runs from: install hints name it
#: (sessions-graph is installed from a checkout, not from PyPI).
CHECKOUT = Path(__file__).resolve().parent.parent


def run(
    env: dict[str, str], *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """One CLI command with ``env`` as its whole environment, ``stdin`` as its
    input (a hook's event), output captured."""
    return subprocess.run(
        [*CLI, *args], input=stdin, env=env, capture_output=True, text=True, timeout=120, cwd=cwd
    )
