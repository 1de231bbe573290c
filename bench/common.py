"""What the benchmark scripts share: the environment of the ``sessions-graph``
processes they time, and percentiles of their samples."""

from __future__ import annotations

import os
from pathlib import Path


def process_env(root: Path, db: Path, user: str) -> dict[str, str]:
    """The environment of a timed ``sessions-graph`` process: this one's,
    with config and state under ``root``, the store at ``db`` acting for
    ``user``, no Memgraph settings (the embedded engine is what is timed), and
    bytecode caching on, as in an install (pip compiles at install time)."""
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "SESSIONS_GRAPH_DB": str(db),
        "SESSIONS_GRAPH_USER_ID": user,
    }
    env = {k: v for k, v in env.items() if not k.startswith("MEMGRAPH_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def percentile(samples: list[float], q: float) -> float:
    """The sample at quantile ``q`` (nearest rank, no interpolation)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
