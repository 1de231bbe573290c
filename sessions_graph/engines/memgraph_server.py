"""What the Memgraph engine must know about the server it talks to, kept
free of the driver so that it can be tested without one: which release it
is (and so which form of a version-dependent statement it takes), and which
schema objects it already holds.

Statement forms. ``text_search.search`` changed its third argument in
Memgraph 3.11.0 (a breaking change in that release's notes): from 3.6.0
through 3.10.x it is a positional ``limit INTEGER``; from 3.11.0 it is a
config map (``{limit: n, fuzzy_distance: ...}``). Each form is its own query
file, named by one convention:

* ``cypher/<area>/<name>.cypher`` — the current form (config map, >= 3.11);
* ``cypher/<area>/<name>_int_limit.cypher`` — the positional INTEGER limit,
  for 3.6–3.10.

``statement_form`` picks the file for a release; the engine asks the server
its release once (``SHOW VERSION``) and caches the choice per statement.

Schema objects. ``setup`` and a workspace's first use compare what a schema
script would create with what ``SHOW INDEX INFO`` / ``SHOW CONSTRAINT INFO``
list, and run only the missing statements: schema statements need storage
access that concurrent writers hold (``CREATE INDEX`` read-only access,
``CREATE CONSTRAINT`` exclusive access), so re-running them per run would
make reconciliation wait on, and fail with, every busy moment of the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: A Memgraph release, as (major, minor, patch).
Version = tuple[int, int, int]

#: The least release this package supports: text search without flags.
MINIMUM_VERSION: Version = (3, 6, 0)
#: The first release whose ``text_search.search`` takes a config map.
CONFIG_MAP_SINCE: Version = (3, 11, 0)
#: The file-name suffix of a statement's 3.6–3.10 form.
INT_LIMIT_SUFFIX = "_int_limit"

_VERSION = re.compile(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: object) -> Version | None:
    """The release a ``SHOW VERSION`` answer names, or None if it names none.

    Release builds answer ``3.6.2``; development and enterprise builds add
    suffixes (``3.12.0+41~c0ffee``, ``3.11.0-rc1``), which are ignored."""
    if not isinstance(text, str):
        return None
    match = _VERSION.match(text)
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def format_version(version: Version) -> str:
    return ".".join(map(str, version))


class UnsupportedServer(Exception):
    """The server is a release older than this package supports."""


def statement_form(name: str, version: Version | None, has_int_limit_form: bool) -> str:
    """The query file to run for statement ``name`` on a server of ``version``.

    A statement without an ``_int_limit`` file is the same on every release.
    A version nobody could parse gets the current form: every release since
    3.11 takes it, and a build whose version string we cannot read is far more
    likely a new or development build than an old one."""
    if not has_int_limit_form:
        return name
    if version is None or version >= CONFIG_MAP_SINCE:
        return name
    if version < MINIMUM_VERSION:
        raise UnsupportedServer(
            f"Memgraph {format_version(version)} is older than"
            f" {format_version(MINIMUM_VERSION)}, the least release sessions-graph supports"
            " (text search without flags): upgrade the server"
        )
    return name + INT_LIMIT_SUFFIX


# -- schema objects ---------------------------------------------------------------
#: What identifies one schema object: ("unique", label, properties),
#: ("index", label, properties) or (kind, index name) for named indexes
#: such as text and vector indexes.
SchemaKey = tuple[str, ...]

_NAME = r"`?([A-Za-z_][A-Za-z0-9_]*)`?"
_UNIQUE = re.compile(
    rf"CREATE\s+CONSTRAINT\s+ON\s*\(\s*\w+\s*:\s*{_NAME}\s*\)\s*ASSERT\s+(.+?)\s+IS\s+UNIQUE\s*$",
    re.IGNORECASE | re.DOTALL,
)
_INDEX = re.compile(
    rf"CREATE\s+INDEX\s+ON\s*:\s*{_NAME}\s*(?:\((.*)\))?\s*$", re.IGNORECASE | re.DOTALL
)
_NAMED_INDEX = re.compile(
    r"CREATE\s+(\w+)\s+(?:EDGE\s+)?INDEX\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s+ON\b",
    re.IGNORECASE | re.DOTALL,
)


def _properties(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(p.strip().strip("`").split(".")[-1] for p in text.split(",") if p.strip())


def schema_key(statement: str) -> SchemaKey | None:
    """The object a ``CREATE`` schema statement makes, or None for a statement
    this module does not recognise (which is then always run)."""
    statement = statement.strip().rstrip(";").strip()
    if match := _UNIQUE.match(statement):
        return ("unique", match.group(1), *sorted(_properties(match.group(2))))
    if match := _INDEX.match(statement):
        return ("index", match.group(1), *_properties(match.group(2)))
    if match := _NAMED_INDEX.match(statement):
        return (match.group(1).lower(), match.group(2))
    return None


def _cell_properties(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return _properties(str(value))


def present_schema(
    index_rows: Iterable[Mapping[str, Any]], constraint_rows: Iterable[Mapping[str, Any]]
) -> set[SchemaKey]:
    """The schema objects ``SHOW INDEX INFO`` and ``SHOW CONSTRAINT INFO`` list.

    Both answer one row per object, by position: a type ("label",
    "label+property", "unique", or a text/vector index type that names the
    index), a label, and the property or properties (a string or a list).
    Columns are read by position, not by header, so that a release that
    renames a header or adds a column (such as ``count``) still reads."""
    present: set[SchemaKey] = set()
    for row in index_rows:
        cells = list(row.values())
        if len(cells) < 2:
            continue
        kind = str(cells[0]).lower()
        label = str(cells[1])
        if kind in ("label", "label+property", "label+properties"):
            present.add(("index", label, *_cell_properties(cells[2] if len(cells) > 2 else None)))
            continue
        # Named indexes (text, vector, ...): their name appears in the type
        # ("text (name: memory_content_index)") or in a cell of its own.
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(map(str, cells))))
        for word in words:
            for named in ("text", "vector"):
                if named in kind:
                    present.add((named, word))
    for row in constraint_rows:
        cells = list(row.values())
        if len(cells) >= 3 and str(cells[0]).lower() == "unique":
            present.add(("unique", str(cells[1]), *sorted(_cell_properties(cells[2]))))
    return present


def missing_statements(statements: Iterable[str], present: set[SchemaKey]) -> list[str]:
    """The statements whose object is not among ``present``, in order."""
    return [s for s in statements if (key := schema_key(s)) is None or key not in present]
