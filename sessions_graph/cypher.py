"""Named Cypher queries, one per ``.cypher`` file, loaded by name and cached.

The Cypher lives in files (``cypher/<area>/<name>.cypher``) so that it can be
read, reviewed and run in a console on its own. A wheel carries the folder
inside the package (``sessions_graph/cypher``); an editable install reads the
repository's top-level ``cypher/``. The package copy is looked at first.

Queries take every value as a ``$parameter``. The one exception is the
``{workspace}`` placeholder: the entity workspace *label*, which Cypher cannot
parameterise; ``render`` fills it in only after strict validation.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from sessions_graph.validation import check_workspace

_HERE = Path(__file__).resolve().parent
#: Where query files are looked for, in order: inside the package (wheel),
#: then the repository root (editable install).
SEARCH_PATH = (_HERE / "cypher", _HERE.parent / "cypher")

#: The only placeholder a query file may contain.
WORKSPACE_PLACEHOLDER = "{workspace}"

_NAME = re.compile(r"[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)*")


def root() -> Path:
    """The folder the queries are read from."""
    for folder in SEARCH_PATH:
        if folder.is_dir():
            return folder
    raise FileNotFoundError(f"no cypher/ folder in {', '.join(map(str, SEARCH_PATH))}")


@cache
def load(name: str) -> str:
    """The query ``name`` (e.g. ``"memory/save"``), with comment lines removed."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"invalid query name {name!r}")
    path = root() / f"{name}.cypher"
    text = path.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(lines).strip()


def statements(name: str) -> list[str]:
    """A script file (``schema/*``): its statements, one per ``;``-ended line."""
    return [s.strip() for s in load(name).split(";") if s.strip()]


def names() -> list[str]:
    """Every query name available, sorted."""
    base = root()
    return sorted(p.relative_to(base).with_suffix("").as_posix() for p in base.rglob("*.cypher"))


def render(name: str, workspace: str) -> str:
    """The query ``name`` with its workspace label filled in (backticked)."""
    return load(name).replace(WORKSPACE_PLACEHOLDER, f"`{check_workspace(workspace)}`")
