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
    """The query ``name`` (e.g. ``"memory/save"``), without its comments."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"invalid query name {name!r}")
    path = root() / f"{name}.cypher"
    text = _strip_comments(path.read_text(encoding="utf-8"))
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines)


@cache
def exists(name: str) -> bool:
    """Whether a query file ``name`` exists (e.g. a statement's ``_int_limit`` form)."""
    return bool(_NAME.fullmatch(name)) and (root() / f"{name}.cypher").is_file()


def statements(name: str) -> list[str]:
    """A file's statements, split at each ``;`` outside quotes.

    Bolt runs one statement per call, so a script file (``schema/*``) is run
    statement by statement; every other file must hold exactly one."""
    return [s.strip() for s in _split(load(name)) if s.strip()]


def _scan(text: str) -> list[tuple[str, str]]:
    """Cut Cypher into ("code" | "quoted" | "comment", text) pieces, so that
    ``//``, ``/*`` and ``;`` inside a string or backticked name are left alone."""
    pieces: list[tuple[str, str]] = []
    i, n, start = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "'\"`":
            end = i + 1
            while end < n and text[end] != c:
                end += 2 if text[end] == "\\" and c != "`" else 1
            pieces += [("code", text[start:i]), ("quoted", text[i : end + 1])]
            i = start = end + 1
        elif text.startswith(("//", "/*"), i):
            # A line comment ends before its newline, which stays as whitespace.
            closer, kept = ("\n", 1) if text[i + 1] == "/" else ("*/", 0)
            end = text.find(closer, i + 2)
            end = n if end < 0 else end + len(closer) - kept
            pieces += [("code", text[start:i]), ("comment", text[i:end])]
            i = start = end
        else:
            i += 1
    pieces.append(("code", text[start:]))
    return pieces


def _strip_comments(text: str) -> str:
    return "".join(piece for kind, piece in _scan(text) if kind != "comment")


def _split(text: str) -> list[str]:
    parts = [""]
    for kind, piece in _scan(text):
        if kind != "code":
            parts[-1] += piece
            continue
        first, *rest = piece.split(";")
        parts[-1] += first
        parts += rest
    return parts


def names() -> list[str]:
    """Every query name available, sorted."""
    base = root()
    return sorted(p.relative_to(base).with_suffix("").as_posix() for p in base.rglob("*.cypher"))


def render(name: str, workspace: str) -> str:
    """The query ``name`` with its workspace label filled in (backticked)."""
    return load(name).replace(WORKSPACE_PLACEHOLDER, f"`{check_workspace(workspace)}`")
