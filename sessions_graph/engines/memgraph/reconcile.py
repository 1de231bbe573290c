"""Reconciliation on the Memgraph engine: session claims, the units and their
chunks, chunk claims, saving an extraction (entities as LightRAG nodes,
relations as ``DIRECTED`` edges, merged with LightRAG's own parts), collecting
chunks nothing references, and what sessions mention. The mixin reaches the
plumbing (``_read``, ``_write``, ``_ensure_workspace``) through ``self``; it
comes from ``engine.py``."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sessions_graph.cypher import render
from sessions_graph.engines import lightrag_fields as fields
from sessions_graph.engines.base import EXTRACTORS, FAILED, LLM_EXTRACTOR, Record
from sessions_graph.engines.memgraph.rows import _STATUS_PARAMS, _count, _rows, _session_record
from sessions_graph.errors import MemoryValidationError
from sessions_graph.provenance import conversation_units
from sessions_graph.validation import check_workspace


class Reconcile:
    """Claims, chunks, extractions and the garbage they leave."""

    # -- claims ----------------------------------------------------------------
    def claim_sessions(
        self,
        owner: str,
        lease_seconds: float,
        limit: int,
        include_failed: bool = False,
        session_id: str | None = None,
    ) -> list[Record]:
        now = time.time()
        params = {"owner": owner, "now": now, "expires_at": now + lease_seconds, **_STATUS_PARAMS}
        if session_id is not None:
            rows = self._write(lambda tx: _rows(tx, "claim/one", session_id=session_id, **params))
        else:
            rows = self._write(
                lambda tx: _rows(
                    tx, "claim/many", limit=limit, include_failed=include_failed, **params
                )
            )
        return [_session_record(r) for r in rows]

    def renew_claim(self, session_id: str, owner: str, lease_seconds: float) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "claim/renew",
                session_id=session_id,
                owner=owner,
                expires_at=time.time() + lease_seconds,
                **_STATUS_PARAMS,
            )
        )
        return _count(rows, "renewed") > 0

    def finish_reconciliation(
        self,
        session_id: str,
        owner: str,
        status: str,
        finished_at: str,
        summary: Record | None,
        error: str | None,
    ) -> bool:
        rows = self._write(
            lambda tx: _rows(
                tx,
                "claim/finish",
                session_id=session_id,
                owner=owner,
                status=status,
                finished_at=finished_at,
                error=error if status == FAILED else None,
                summary=json.dumps(summary) if summary is not None else None,
                **_STATUS_PARAMS,
            )
        )
        return _count(rows, "finished") > 0

    # -- units and chunks ------------------------------------------------------
    def reconcilable_units(self, session_id: str) -> list[Record]:
        return conversation_units(
            self._read("reconcile/action_units", session_id=session_id)
            + self._read("reconcile/memory_units", session_id=session_id)
        )

    def set_unit_chunks(
        self, unit_kind: str, unit_id: str, content_hash: str, chunks: Sequence[Record]
    ) -> None:
        if unit_kind not in ("action", "memory"):
            raise MemoryValidationError(f"unit_kind must be 'action' or 'memory': {unit_kind!r}")
        # One link per chunk, at the last position it holds, as the embedded
        # engine's (unit, chunk) key keeps it when a text repeats a chunk.
        linked = {
            c["hash"]: {"hash": c["hash"], "text": c["text"], "position": i}
            for i, c in enumerate(chunks)
        }
        rows = list(linked.values())

        def work(tx: Any) -> None:
            old = [
                r["hash"]
                for r in _rows(
                    tx,
                    f"reconcile/detach_{unit_kind}_chunks",
                    unit_id=unit_id,
                    content_hash=content_hash,
                )
            ]
            if rows:
                _rows(tx, f"reconcile/attach_{unit_kind}_chunks", unit_id=unit_id, chunks=rows)
            kept = {r["hash"] for r in rows}
            self._collect_garbage(tx, [h for h in old if h not in kept])

        self._write(work)

    def unextracted_chunks(
        self, session_id: str, workspace: str, extractors: Sequence[str] = (LLM_EXTRACTOR,)
    ) -> list[Record]:
        check_workspace(workspace)
        rows = self._read("reconcile/session_chunks", session_id=session_id)
        rows.sort(key=lambda r: (r["part"], r["unit_order"], r["unit_key"], r["position"]))
        marks = {extraction_mark(workspace, e): e for e in _all_extractors(extractors)}
        wanted = {extraction_mark(workspace, e) for e in extractors}
        seen: set[str] = set()
        out = []
        for row in rows:
            done = set(row["extracted_in"])
            if row["hash"] in seen or done & wanted:
                continue
            seen.add(row["hash"])
            by = sorted(marks[m] for m in done if m in marks)
            out.append({"hash": row["hash"], "text": row["text"], "extracted_by": by})
        return out

    def claim_chunks(
        self,
        hashes: Sequence[str],
        workspace: str,
        owner: str,
        lease_seconds: float,
        extractors: Sequence[str] = (LLM_EXTRACTOR,),
    ) -> set[str]:
        check_workspace(workspace)
        if not hashes:
            return set()
        now = time.time()
        rows = self._write(
            lambda tx: _rows(
                tx,
                "reconcile/claim_chunks",
                hashes=sorted(set(hashes)),
                workspace=workspace,
                marks=sorted({extraction_mark(workspace, e) for e in extractors}),
                owner=owner,
                now=now,
                expires_at=now + lease_seconds,
            )
        )
        return {r["hash"] for r in rows}

    def _collect_garbage(self, tx: Any, chunk_hashes: Sequence[str]) -> tuple[int, int]:
        """Delete unreferenced chunks among ``chunk_hashes`` with their mentions,
        retract what they asserted, then settle the entities they mentioned.
        Returns (chunks, entities) deleted.

        The embedded engine keeps relations per chunk, so they go with it; here
        a relation is one edge per entity pair, so the chunk's assertion is
        taken off it (``_update_relations``)."""
        if not chunk_hashes:
            return 0, 0
        rows = _rows(tx, "reconcile/gc_chunks", hashes=sorted(set(chunk_hashes)))
        for row in rows:
            if row["entity_ids"]:
                self._update_relations(tx, row["hash"], row["entity_ids"])
        entity_ids = sorted({i for r in rows for i in r["entity_ids"]})
        return len(rows), self._refresh_entities(tx, entity_ids)

    @staticmethod
    def _update_relations(
        tx: Any,
        chunk_hash: str,
        entity_ids: Sequence[int],
        workspace: str | None = None,
        asserted: Sequence[Record] = (),
        ids_by_name: dict[str, int] | None = None,
    ) -> None:
        """Make the DIRECTED edges say what chunk ``chunk_hash`` now asserts:
        its old assertions among ``entity_ids`` are retracted, ``asserted``
        (relations by entity name) added. Each edge keeps one assertion per
        chunk of ours; its LightRAG fields are merged with the parts others
        (LightRAG) wrote, never overwritten (``lightrag_fields``)."""
        edges: dict[frozenset[int], Record] = {}
        for row in _rows(
            tx,
            "reconcile/relations_of_chunk",
            entity_ids=list(dict.fromkeys(entity_ids)),
            hash=chunk_hash,
        ):
            edges.setdefault(frozenset((row["a_id"], row["b_id"])), row)
        wanted: dict[frozenset[int], tuple[int, int, Record]] = {}
        for rel in asserted:
            a, b = (ids_by_name or {})[rel["source"]], (ids_by_name or {})[rel["target"]]
            wanted[frozenset((a, b))] = (a, b, {"hash": chunk_hash, **rel})
        if wanted:
            pairs = [{"a": a, "b": b} for a, b, _ in wanted.values()]
            for row in _rows(tx, "reconcile/relations_between", pairs=pairs):
                edges.setdefault(frozenset((row["a_id"], row["b_id"])), row)
        writes, releases, deletes = [], [], []
        for key in sorted(set(edges) | set(wanted), key=sorted):
            row = edges.get(key)
            props = row["props"] if row else {}
            assertions = [a for a in fields.assertions_of(props) if a["hash"] != chunk_hash]
            if key in wanted:
                assertions.append(wanted[key][2])
            update = fields.relation_update(props, assertions)
            ends = (
                {"a_id": row["a_id"], "b_id": row["b_id"]}
                if row
                else {
                    "a_id": wanted[key][0],
                    "b_id": wanted[key][1],
                }
            )
            if update.action == fields.WRITE:
                writes.append(
                    {
                        **ends,
                        **update.fields,
                        "added": update.added,
                        "assertions": sorted(assertions, key=lambda a: a["hash"]),
                        "chunk_hashes": sorted(a["hash"] for a in assertions),
                        "workspace": props.get("workspace") or workspace,
                    }
                )
            elif update.action == fields.RELEASE:
                releases.append({**ends, **update.fields})
            elif row is not None:
                deletes.append(ends)
        if writes:
            _rows(tx, "reconcile/write_relations", rows=writes, created_at=int(time.time()))
        if releases:
            _rows(tx, "reconcile/release_relations", rows=releases)
        if deletes:
            _rows(tx, "reconcile/delete_relations", rows=deletes)

    @staticmethod
    def _refresh_entities(tx: Any, entity_ids: Sequence[int]) -> int:
        """Merge our mentions into the entities' LightRAG fields; release
        entities we no longer mention but something else holds, delete those
        nothing holds. Returns how many were deleted."""
        if not entity_ids:
            return 0
        writes, releases, deletes = [], [], []
        for row in _rows(tx, "reconcile/entity_state", entity_ids=list(dict.fromkeys(entity_ids))):
            mentions = [m for m in row["mentions"] if m.get("hash")]
            update = fields.entity_update(row["props"], mentions, row["others"])
            if update.action == fields.WRITE:
                writes.append({"id": row["id"], **update.fields, "added": update.added})
            elif update.action == fields.RELEASE:
                releases.append({"id": row["id"], **update.fields})
            else:
                deletes.append(row["id"])
        if writes:
            _rows(tx, "reconcile/write_entities", rows=writes)
        if releases:
            _rows(tx, "reconcile/release_entities", rows=releases)
        if not deletes:
            return 0
        return _count(_rows(tx, "reconcile/delete_entities", ids=deletes), "deleted")

    # -- extraction ------------------------------------------------------------
    def save_extraction(
        self,
        chunk_hash: str,
        workspace: str,
        entities: Sequence[Record],
        relations: Sequence[Record],
        extractor: str = LLM_EXTRACTOR,
    ) -> None:
        check_workspace(workspace)
        self._ensure_workspace(workspace)
        entity_rows = _entity_rows(entities, relations)
        relation_rows = [
            {
                "source": r["source"],
                "target": r["target"],
                "description": r.get("description") or "",
                "keywords": r.get("keywords") or "",
                "weight": float(r.get("weight") or 1.0),
            }
            for r in relations
        ]

        def work(tx: Any) -> None:
            found = _rows(
                tx,
                "reconcile/mark_extracted",
                hash=chunk_hash,
                workspace=workspace,
                mark=extraction_mark(workspace, extractor),
            )
            if not _count(found, "found"):
                return  # collected since it was read: nothing left to describe
            old = [
                r["entity_id"]
                for r in _rows(
                    tx, "reconcile/clear_chunk_mentions", hash=chunk_hash, workspace=workspace
                )
            ]
            ids_by_name: dict[str, int] = {}
            merged_ids: set[int] = set()
            if entity_rows:
                merged = tx.run(
                    render("reconcile/merge_entities", workspace),
                    {
                        "hash": chunk_hash,
                        "workspace": workspace,
                        "created_at": int(time.time()),
                        "entities": entity_rows,
                    },
                ).data()[0]["entities"]
                ids_by_name = {e["name"]: e["id"] for e in merged}
                # Every node the MERGE found: without a unique constraint a
                # workspace may hold duplicates (LightRAG's, or a race of
                # ours), and each one that got our mention is refreshed.
                merged_ids = {e["id"] for e in merged}
            touched = sorted(set(old) | merged_ids)
            self._update_relations(tx, chunk_hash, touched, workspace, relation_rows, ids_by_name)
            self._refresh_entities(tx, touched)

        self._write(work)

    def session_mentions(self, session_id: str) -> list[Record]:
        return self._read("reconcile/session_mentions", session_id=session_id)

    def entity_sessions(self, name: str, user_id: str) -> list[Record]:
        rows = self._read("reconcile/entity_sessions", name_key=name.casefold(), user_id=user_id)
        return [_session_record(r) for r in rows]

    def user_entity_mentions(self, user_id: str, session_ids: Sequence[str]) -> list[Record]:
        return self._read(
            "reconcile/user_entity_mentions", user_id=user_id, session_ids=list(session_ids)
        )


def extraction_mark(workspace: str, extractor: str) -> str:
    """The entry of ``Chunk.extracted_in`` that says ``extractor`` extracted the
    chunk into ``workspace``: the workspace itself for the LLM (as before there
    were other extractors), ``extractor:workspace`` otherwise (a workspace name
    holds no ':', so the two never collide)."""
    return workspace if extractor == LLM_EXTRACTOR else f"{extractor}:{workspace}"


def _all_extractors(extra: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*EXTRACTORS, *extra]))


def _entity_rows(entities: Sequence[Record], relations: Sequence[Record]) -> list[Record]:
    """One row per name this chunk mentions, as the embedded engine records it.

    ``entity_type`` is what a new entity is created with (the first time the
    name appears); ``mention_type`` and ``description`` are the chunk's mention,
    where a repeated name's last occurrence wins. A relation end the chunk did
    not list becomes a mention with neither type nor description, as LightRAG
    gives such an end a node, so that every relation has two entities."""
    rows: dict[str, Record] = {}
    for entity in entities:
        name = entity["name"]
        row = rows.setdefault(
            name,
            {"name": name, "name_key": name.casefold(), "entity_type": entity.get("entity_type")},
        )
        row["mention_type"] = entity.get("entity_type")
        row["description"] = entity.get("description")
    for relation in relations:
        for name in (relation["source"], relation["target"]):
            rows.setdefault(
                name,
                {
                    "name": name,
                    "name_key": name.casefold(),
                    "entity_type": None,
                    "mention_type": None,
                    "description": None,
                },
            )
    return list(rows.values())
