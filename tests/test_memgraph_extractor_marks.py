"""The Memgraph engine's extraction marks per extractor, without a server: a
fake driver answers the session's chunks and records what the engine sends.

``Chunk.extracted_in`` holds the workspace for the LLM (as it did before there
were other extractors) and ``local:<workspace>`` for the local extractor."""

from __future__ import annotations

from typing import Any

from memgraph_fakes import fake_engine

from sessions_graph.cypher import load
from sessions_graph.engines.memgraph.reconcile import extraction_mark

ROWS = [
    {"hash": "h-none", "extracted_in": []},
    {"hash": "h-local", "extracted_in": ["local:base"]},
    {"hash": "h-llm", "extracted_in": ["base"]},
    {"hash": "h-both", "extracted_in": ["base", "local:base", "other"]},
    {"hash": "h-elsewhere", "extracted_in": ["spare", "local:spare"]},
]


def answer(statement: str, params: dict[str, Any]) -> Any:
    if statement == load("reconcile/session_chunks"):
        return [
            {**row, "text": row["hash"], "part": 0, "unit_order": i, "unit_key": "", "position": 0}
            for i, row in enumerate(ROWS)
        ]
    if statement == load("reconcile/mark_extracted"):
        return [{"found": 1}]
    return []


def test_marks_never_collide_with_a_workspace() -> None:
    assert extraction_mark("base", "llm") == "base"
    assert extraction_mark("base", "local") == "local:base"


def test_unextracted_chunks_per_extractor() -> None:
    engine, _ = fake_engine(answer)

    for_llm = engine.unextracted_chunks("s-1", "base", ("llm",))
    for_local = engine.unextracted_chunks("s-1", "base", ("llm", "local"))

    assert [(c["hash"], c["extracted_by"]) for c in for_llm] == [
        ("h-none", []),
        ("h-local", ["local"]),
        ("h-elsewhere", []),
    ]
    assert [c["hash"] for c in for_local] == ["h-none", "h-elsewhere"]
    assert [c["hash"] for c in engine.unextracted_chunks("s-1", "base")] == [
        "h-none",
        "h-local",
        "h-elsewhere",
    ]


def test_claims_and_saves_send_the_extractors_marks() -> None:
    engine, driver = fake_engine(answer)
    engine._workspaces.add("base")  # no schema statements in this test

    engine.claim_chunks(["h-1"], "base", "run-1", 60, ("llm", "local"))
    engine.save_extraction("h-1", "base", [], [], "local")
    engine.save_extraction("h-1", "base", [], [])

    claim = next(s for s in driver.sent if s.statement == load("reconcile/claim_chunks"))
    assert claim.params["marks"] == ["base", "local:base"]
    assert claim.params["workspace"] == "base"  # one claim per chunk and workspace
    # Held for the lease asked for, from the moment it was claimed.
    assert claim.params["expires_at"] == claim.params["now"] + 60
    mark = load("reconcile/mark_extracted")
    marks = [s.params["mark"] for s in driver.sent if s.statement == mark]
    assert marks == ["local:base", "base"]
