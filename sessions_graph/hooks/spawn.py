"""Starting background work without waiting for it: a reconcile run, or a
replay of a long spool.

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
from sessions_graph.hooks.spool import replay_running

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


def child_env(settings: Settings, **overrides: str) -> dict[str, str]:
    """The environment of a background child: ours, plus the settings that
    locate the store this process used, even when they came from overrides
    rather than the environment or the config file."""
    env = dict(os.environ)
    for key in _STORE_KEYS:
        value = getattr(settings, key)
        if value not in ("", None):
            env[f"SESSIONS_GRAPH_{key.upper()}"] = str(value)
    for key, value in overrides.items():
        env[f"SESSIONS_GRAPH_{key.upper()}"] = value
    return env


def spawn_detached(
    settings: Settings, argv: list[str], log_path: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """Start ``python argv`` in its own session, stdin from /dev/null, output
    appended to ``log_path``; return at once."""
    private_dirs(log_path.parent)
    with (
        os.fdopen(open_private(log_path, os.O_WRONLY | os.O_APPEND), "ab") as log,
        open(os.devnull, "rb") as devnull,
    ):
        # The child holds its own copies of the descriptors; ours close here.
        return subprocess.Popen(
            [sys.executable, *argv],
            stdin=devnull,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


def spawn_reconcile(
    settings: Settings, session_id: str, *, user_id: str | None = None
) -> subprocess.Popen[bytes]:
    """Start ``sessions-graph reconcile --session ID`` detached; return at once.

    ``user_id``: the session's owner, for whom the run acts (``reconcile
    --session`` acts for one user only); it differs from the configured one
    after a mid-session ``user_id`` change."""
    env = child_env(settings, **({"user_id": user_id} if user_id else {}))
    argv = ["-m", "sessions_graph", "reconcile", "--session", session_id]
    return spawn_detached(settings, argv, reconcile_log_path(settings), env)


def spawn_replay(settings: Settings) -> subprocess.Popen[bytes] | None:
    """Start a detached replay of the spool (``hooks.drain``), unless a
    process is replaying already (it takes every file, ours included)."""
    if replay_running(settings):
        return None
    argv = ["-m", "sessions_graph.hooks.drain"]
    return spawn_detached(settings, argv, settings.log_path, child_env(settings))
