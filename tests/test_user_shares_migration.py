"""The embedded migration that keeps each user's share of the chunks and
entities (``schema.USER_SHARES``), on a store reconciled before it: the
shares are filled from what the file holds, and kept from then on."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from reconcile_scripted import ScriptedLLM, record

from sessions_graph import SessionsGraph
from sessions_graph.engines.sqlite import schema

#: The schema version before the shares were kept.
BEFORE = schema.MIGRATIONS.index(schema.USER_SHARES)
SHARED = "Shared note: the Falcon cluster runs Memgraph behind Traefik."


def counts(graph: SessionsGraph, user: str) -> tuple[int, ...]:
    return tuple(graph.status(user_id=user)["counts"].values())


def test_a_store_from_before_gets_its_shares_and_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SessionsGraph(db=str(path)) as graph:
        record(graph, "s-1", "ann", "Ann deployed Memgraph on Kubernetes.", SHARED)
        record(graph, "s-2", "ben", SHARED)
        graph.save_memory("ann", "Ann prefers Grafana dashboards.", session_id="s-1")
        asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))
    # The file as the build before wrote it: no shares, no triggers keeping them.
    conn = sqlite3.connect(path, isolation_level=None)
    for table in ("user_chunks", "user_entities"):
        conn.execute(f"DROP TABLE {table}")  # their own triggers go with them
    for trigger in ("unit_chunks_share_ai", "unit_chunks_share_ad", "memories_share_bd"):
        conn.execute(f"DROP TRIGGER {trigger}")
    for trigger in ("mentions_share_ai", "mentions_share_ad"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute(f"PRAGMA user_version = {BEFORE}")
    conn.close()

    with SessionsGraph(db=str(path)) as graph:  # migrates
        assert graph.status()["schema_version"] == schema.SCHEMA_VERSION
        # sessions, actions, memories, chunks, entities
        assert counts(graph, "ann") == (1, 2, 1, 3, 7)  # and Ann, Kubernetes, Grafana
        assert counts(graph, "ben") == (1, 1, 0, 1, 4)  # Shared, Falcon, Memgraph, Traefik
        graph.forget_session("s-1")
        assert counts(graph, "ann") == (0, 0, 0, 0, 0)
        assert counts(graph, "ben") == (1, 1, 0, 1, 4)
