"""Starting a reconcile run in the background without waiting for it.

Reconciliation calls an LLM and takes seconds to minutes; the agent must
not wait. The child gets its own session (so the agent's Ctrl-C or exit does
not kill it), no stdin, and appends its output to a log file. If it dies, the
session simply stays pending for the next ``reconcile --pending`` sweep.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sessions_graph.hooks.log import open_private, private_dirs

if TYPE_CHECKING:
    from sessions_graph.settings import Settings


#: Settings that locate the store; passed to the child explicitly.
_STORE_KEYS = (
    "engine",
    "db",
    "memgraph_url",
    "memgraph_host",
    "memgraph_port",
    "memgraph_user",
    "memgraph_password",
    "memgraph_database",
    "user_id",
    "state_dir",
)


def reconcile_log_path(settings: Settings) -> Path:
    return Path(settings.state_dir) / "reconcile.log"


def spawn_reconcile(settings: Settings, session_id: str) -> subprocess.Popen[bytes]:
    """Start ``sessions-graph reconcile --session ID`` detached; return at once."""
    # The child must reach the store this process used, even when that came
    # from overrides rather than the environment or the config file.
    env = dict(os.environ)
    for key in _STORE_KEYS:
        value = getattr(settings, key)
        if value not in ("", None):
            env[f"SESSIONS_GRAPH_{key.upper()}"] = str(value)
    log_path = reconcile_log_path(settings)
    private_dirs(log_path.parent)
    with (
        os.fdopen(open_private(log_path, os.O_WRONLY | os.O_APPEND), "ab") as log,
        open(os.devnull, "rb") as devnull,
    ):
        # The child holds its own copies of the descriptors; ours close here.
        return subprocess.Popen(
            [sys.executable, "-m", "sessions_graph", "reconcile", "--session", session_id],
            stdin=devnull,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
