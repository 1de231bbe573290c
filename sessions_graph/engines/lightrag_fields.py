"""Our share of the fields LightRAG keeps on a workspace's entity nodes and
``DIRECTED`` edges, so that sessions-graph and LightRAG's own ingestion can
write the same nodes without either losing the other's data.

LightRAG merges into these fields itself: ``source_id``, ``description``
and ``file_path`` are parts joined by its ``<SEP>``, ``keywords`` are
comma-joined, an edge's ``weight`` is the sum of its sources' weights. When
it merges, it reads the node or edge (our parts included) and writes the
union back. So we can neither overwrite a field (LightRAG's parts would go)
nor recompute it from our records alone.

Instead every node or edge we write carries ``sg_added``: the parts we
added to each shared field (and the weight we added), no more. On every
change we take our previous parts out of the current value, once each,
which leaves exactly the others' parts (whatever LightRAG merged in since),
then append the parts we hold now that are not already there. A part
LightRAG already had is never recorded as ours, so removing ours never
removes theirs. A node or edge is deleted only when we hold nothing and no
other part, nor any relationship other than our mentions, remains;
otherwise our parts, our label (``:Entity``) and our bookkeeping leave and
the rest stays as LightRAG wrote it.

Pure functions of property maps, so the rules are tested without a server
(tests/test_lightrag_coexistence.py, which also runs LightRAG's own merge
against the result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: LightRAG's ``GRAPH_FIELD_SEP``, repeated so that LightRAG need not be installed.
SEP = "<SEP>"
#: LightRAG's keyword separator on edges.
KEYWORD_SEP = ","
#: The ``file_path`` part that says "sessions-graph wrote this".
OUR_FILE_PATH = "sessions-graph"

#: Our chunk ids: SHA-256 hex digests. LightRAG's are ``chunk-`` + MD5, so a
#: ``source_id`` part of this shape is ours whatever ``sg_added`` says: one
#: LightRAG copied while we removed it (its read-merge-write spans two
#: transactions) is taken out at our next update instead of staying for ever.
OUR_CHUNK_ID = re.compile(r"[0-9a-f]{64}")

#: Shared list fields and how LightRAG joins their parts.
ENTITY_FIELDS = {"source_id": SEP, "description": SEP, "file_path": SEP}
RELATION_FIELDS = {**ENTITY_FIELDS, "keywords": KEYWORD_SEP}

#: What to do with a node or edge after an update.
WRITE, RELEASE, DELETE = "write", "release", "delete"


def split(value: Any, sep: str) -> list[str]:
    """A joined field's parts (LightRAG strips them and skips empty ones)."""
    if not isinstance(value, str) or not value:
        return []
    return [p.strip() for p in value.split(sep) if p.strip()]


def _without(parts: Sequence[str], taken: Iterable[str]) -> list[str]:
    """``parts`` with one occurrence of each of ``taken`` removed."""
    rest = list(parts)
    for part in taken:
        if part in rest:
            rest.remove(part)
    return rest


def _unique(parts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(p for p in parts if p))


def merge_field(
    current: Any, added_before: Sequence[str], ours: Sequence[str], sep: str
) -> tuple[str, list[str], list[str]]:
    """One shared field: (new value, the parts we added now, the others' parts)."""
    others = _without(split(current, sep), added_before)
    added = [p for p in _unique(ours) if p not in others]
    return sep.join(others + added), added, others


@dataclass
class Update:
    """What to write to one node or edge."""

    action: str
    #: The shared fields' new values (all of them, also on RELEASE).
    fields: dict[str, Any] = field(default_factory=dict)
    #: The new ``sg_added`` (WRITE only).
    added: dict[str, Any] = field(default_factory=dict)


def _added(props: Mapping[str, Any]) -> Mapping[str, Any]:
    added = props.get("sg_added")
    return added if isinstance(added, Mapping) else {}


def _merge(
    props: Mapping[str, Any], ours: Mapping[str, Sequence[str]], fields: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    before = _added(props)
    values: dict[str, Any] = {}
    added: dict[str, Any] = {}
    foreign = False
    for name, sep in fields.items():
        taken = list(before.get(name) or ())
        if name == "source_id":
            taken += [p for p in split(props.get(name), sep) if OUR_CHUNK_ID.fullmatch(p)]
        values[name], added[name], others = merge_field(
            props.get(name), taken, ours.get(name, ()), sep
        )
        foreign = foreign or bool(others and name in ("source_id", "description"))
    return values, added, foreign


def entity_update(
    props: Mapping[str, Any], mentions: Sequence[Mapping[str, Any]], other_relationships: int
) -> Update:
    """The update of an entity node from our mentions of it.

    ``mentions``: {hash, description} per chunk of ours that mentions it;
    ``other_relationships``: its relationships other than our mentions
    (relations, anything LightRAG or others attached), counted after our
    relations were updated."""
    mentions = sorted((m for m in mentions if m.get("hash")), key=lambda m: m["hash"])
    ours = {
        "source_id": [m["hash"] for m in mentions],
        "description": [m["description"] for m in mentions if m.get("description")],
        "file_path": [OUR_FILE_PATH] if mentions else [],
    }
    values, added, foreign = _merge(props, ours, ENTITY_FIELDS)
    if mentions:
        return Update(WRITE, values, added)
    if foreign or other_relationships:
        return Update(RELEASE, values)
    return Update(DELETE)


def relation_update(props: Mapping[str, Any], assertions: Sequence[Mapping[str, Any]]) -> Update:
    """The update of a ``DIRECTED`` edge from our chunks' assertions of it.

    ``assertions``: {hash, description, keywords, weight} per chunk of ours
    that asserts the relation (what ``sg_assertions`` keeps on the edge)."""
    assertions = sorted(assertions, key=lambda a: a["hash"])
    ours = {
        "source_id": [a["hash"] for a in assertions],
        "description": [a["description"] for a in assertions if a.get("description")],
        "file_path": [OUR_FILE_PATH] if assertions else [],
        "keywords": [k for a in assertions for k in split(a.get("keywords"), KEYWORD_SEP)],
    }
    values, added, foreign = _merge(props, ours, RELATION_FIELDS)
    weight_before = float(_added(props).get("weight") or 0.0)
    others_weight = max(float(props.get("weight") or 0.0) - weight_before, 0.0)
    our_weight = float(sum(float(a.get("weight") or 0.0) for a in assertions))
    values["weight"] = others_weight + our_weight
    added["weight"] = our_weight
    if assertions:
        return Update(WRITE, values, added)
    if foreign:
        return Update(RELEASE, values)
    return Update(DELETE)


def assertions_of(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-chunk assertions an edge keeps (``sg_assertions``)."""
    kept = props.get("sg_assertions")
    if not isinstance(kept, (list, tuple)):
        return []
    return [dict(a) for a in kept if isinstance(a, Mapping) and a.get("hash")]
