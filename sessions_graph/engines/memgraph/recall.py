"""Recall on the Memgraph engine: the turn index's writes, keyword search
over turns, the turns around a hit, and the entities a recall names.

The turn index is three properties of each Action in one text index:
``recall_body`` (its own text), ``recall_context`` (its neighbours') and
``user_key`` (as on memories: the user inside the Tantivy query). Tantivy
does not stem, so both text properties hold their words' stems, and a
question's words are asked as theirs (``index_text.stems``). Both text
properties are searched separately and summed here with the context weighed
0.3, which needs no boost syntax from the parser.

The mixin reaches the plumbing (``_read``, ``_write``, ``_server_form``,
``search_limit``) through ``self``; it comes from ``engine.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sessions_graph.engines.base import Record, action_key, project_scope
from sessions_graph.engines.memgraph.rows import _rows, user_key
from sessions_graph.index_text.records import group_entity_units
from sessions_graph.index_text.stems import stemmed, stemmed_terms
from sessions_graph.index_text.turns import TURN_CONTEXT_WEIGHT, TURN_RADIUS, turn_documents
from sessions_graph.provenance import conversation_rows
from sessions_graph.query import MAX_TOKEN_BYTES


def turn_search_query(terms: Sequence[Sequence[str]], field: str, key: str) -> str:
    """The Tantivy query for recall's keyword lane on one property: the user's
    key required, any of the terms (phrases of index tokens, which are letters
    and digits only, so quoting is safe)."""
    words = " OR ".join(
        f"data.{field}:{t[0]}" if len(t) == 1 else f'data.{field}:"{" ".join(t)}"' for t in terms
    )
    return f"+data.user_key:{key} +({words})"


class Recall:
    """The turn index and the searches recall runs on it."""

    def _index_turns(self, tx: Any, session_id: str, user_id: str, first_seq: int) -> None:
        """Write the documents of the session's actions from ``first_seq`` on,
        and the contexts of the ones just before them (their new neighbours):
        conversation ones only, from their ``conversation_text``, read back
        ``2 * TURN_RADIUS`` conversation actions (``turn_documents``)."""
        rows = conversation_rows(
            _rows(
                tx,
                "recall/session_tail",
                session_id=session_id,
                first_seq=first_seq,
                before=2 * TURN_RADIUS,
            )
        )
        documents = [
            {
                **d,
                "action_key": action_key(user_id, d["action_id"]),
                "body": stemmed(d["body"]),
                "context": stemmed(d["context"]),
            }
            for d in turn_documents(rows, first_seq)
        ]
        if documents:
            _rows(
                tx,
                "recall/set_documents",
                documents=documents,
                user_key=user_key(user_id),
                cut_bytes=MAX_TOKEN_BYTES,
            )

    def _index_unindexed_sessions(self) -> None:
        """Give the actions stored before the turn index existed their
        documents (``setup`` runs this), one session per transaction."""
        for row in self._read("recall/unindexed_sessions", cut_bytes=MAX_TOKEN_BYTES):
            self._write(lambda tx, r=row: self._index_turns(tx, r["session_id"], r["user_id"], 0))

    def search_turns(
        self, user_id: str, terms: Sequence[Sequence[str]], limit: int, filters: Record
    ) -> list[Record]:
        if not terms:
            return []
        scores: dict[str, float] = {}
        found: dict[str, Record] = {}
        project, project_dir = project_scope(filters.get("project"))
        params = {
            "user_id": user_id,
            "search_limit": max(self.search_limit, limit),
            "exclude": filters.get("exclude_session"),
            "only": filters.get("only_session"),
            "since": filters.get("since"),
            "until": filters.get("until"),
            "told_since": told[0] if (told := filters.get("told")) else None,
            "told_until": told[1] if told else None,
            "project": project,
            "project_dir": project_dir,
        }
        terms = stemmed_terms(terms)
        for field, weight in (("recall_body", 1.0), ("recall_context", TURN_CONTEXT_WEIGHT)):
            query = turn_search_query(terms, field, user_key(user_id))
            for row in self._read(self._server_form("recall/search_turns"), query=query, **params):
                scores[row["action_id"]] = scores.get(row["action_id"], 0.0) + weight * row["score"]
                found.setdefault(row["action_id"], row)
        ranked = sorted(found.values(), key=lambda r: -scores[r["action_id"]])[:limit]
        return [{**r, "score": scores[r["action_id"]]} for r in ranked]

    def turn_windows(self, user_id: str, action_ids: Sequence[str], radius: int) -> list[Record]:
        if not action_ids:
            return []
        rows = self._read(
            "recall/turn_windows",
            user_id=user_id,
            action_keys=[action_key(user_id, a) for a in action_ids],
            radius=radius,
        )
        for row in rows:
            row["is_error"] = bool(row["is_error"])
        return rows

    def recall_entities(self, user_id: str, name_keys: Sequence[str], limit: int) -> list[Record]:
        if not name_keys:
            return []
        rows: list[Record] = []
        # One entity node per read, each bounded by LIMIT: a bound over all of
        # them would let one common entity crowd out the others.
        for entity in self._read("recall/entity_ids", name_keys=list(name_keys)):
            rows += self._read("recall/entities", id=entity["id"], user_id=user_id, limit=limit)
        return group_entity_units(rows)
