"""What the benchmark scripts share: the environment of the ``sessions-graph``
processes they time, the source trees they compare, and percentiles of their
samples."""

from __future__ import annotations

import argparse
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


def add_trees_option(parser: argparse.ArgumentParser) -> None:
    """``--trees A B``: source trees to time in turn (None: the installed code)."""
    parser.add_argument(
        "--trees",
        nargs="+",
        type=lambda t: str(Path(t).resolve()),
        default=[None],
        metavar="DIR",
        help="Source trees to compare (each put first on PYTHONPATH in turn).",
    )


def tree_labels(trees: list[str | None]) -> list[str]:
    """Each tree's name in a table: its directory's name, numbered when two
    are alike (``--trees . .`` measures the noise between equal code)."""
    names = [Path(t).name if t else "installed" for t in trees]
    return [f"{name}#{n}" if names.count(name) > 1 else name for n, name in enumerate(names)]


def on_tree(env: dict[str, str], tree: str | None) -> dict[str, str]:
    """``env`` running ``tree``'s code: the tree first on ``PYTHONPATH``, so
    the same installed dependencies run either tree's code."""
    return {**env, "PYTHONPATH": tree} if tree else env
