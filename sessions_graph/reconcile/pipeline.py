"""The reconciliation run: claim, chunk, dedup by hash, extract, finish.

For each claimed session:

1. every unit (Action, produced Memory) is normalised, redacted, truncated
   and chunked; a unit whose content hash is unchanged is left alone, a
   changed one gets its chunk links replaced (the engine collects orphans);
2. the session's chunks not yet extracted into the workspace are sent to
   LightRAG extraction, each hash once per run even when several sessions of
   the sweep share it (they await the same task);
3. the run finishes the claim: reconciled (or pending, if content arrived
   meanwhile) with a summary, or failed with the error and the previous
   summary kept.

A lease renewed in the background keeps the claim; a killed run's lease
expires and the next sweep takes the session over. Every write is keyed by
hash, so whatever a killed run left is reused, never doubled.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sessions_graph.engines.base import FAILED, RECONCILED, Engine
from sessions_graph.errors import MemoryValidationError
from sessions_graph.reconcile import llm
from sessions_graph.reconcile.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_TOKENS,
    OfflineTokenizer,
    prepare_unit,
)
from sessions_graph.reconcile.extraction import ChunkExtractor, Extraction, LLMFunc
from sessions_graph.reconcile.summary import ReconciliationSummary
from sessions_graph.settings import Settings
from sessions_graph.validation import check_workspace

#: How long a claim lives without renewal; renewed every third of it.
DEFAULT_LEASE_SECONDS = 300.0
#: Chunks shorter than this ("ok", "(no output)") name no entity worth a call
#: that carries a ~7,000-character system prompt: marked extracted, empty.
MIN_EXTRACT_CHARS = 12


@dataclass(frozen=True)
class RunOptions:
    """Knobs of one run; ``None`` fields fall back to the settings."""

    entity_workspace: str | None = None
    concurrency: int | None = None
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP
    gleaning: int = 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


def _utcnow() -> str:
    from sessions_graph.graph import utcnow

    return utcnow()


class Run:
    """One process's run: an owner id for claims, one extractor (so the
    concurrency bound holds across sessions) and the in-flight chunk tasks."""

    def __init__(
        self, engine: Engine, settings: Settings, llm_func: LLMFunc, options: RunOptions
    ) -> None:
        self.engine = engine
        self.options = options
        self.workspace = check_workspace(
            options.entity_workspace or settings.entity_workspace or "base"
        )
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.tokenizer = OfflineTokenizer()
        self.extractor = ChunkExtractor(
            llm_func,
            concurrency=options.concurrency or settings.llm_concurrency,
            gleaning=options.gleaning,
        )
        self._inflight: dict[str, asyncio.Task[Extraction]] = {}

    async def reconcile_claimed(self, record: dict[str, Any]) -> ReconciliationSummary:
        """Reconcile a session this run has claimed, and release the claim."""
        session_id = record["session_id"]
        summary = ReconciliationSummary(
            session_id=session_id, status=RECONCILED, workspace=self.workspace
        )
        started = time.monotonic()
        keeper = asyncio.create_task(self._keep_claim(session_id))
        try:
            await self._work(session_id, summary)
            status, error = RECONCILED, None
        except Exception as exc:
            status, error = FAILED, _one_line(exc)
        finally:
            keeper.cancel()
        summary.duration_s = round(time.monotonic() - started, 3)
        summary.status, summary.error = status, error
        if status == RECONCILED:
            summary.entities_linked = len(self.engine.session_entities(session_id))
            stored = summary.model_dump()
        else:
            stored = record.get("last_summary")  # a failure keeps the last good summary
        if not self.engine.finish_reconciliation(
            session_id, self.owner, status, _utcnow(), stored, error
        ):
            summary.status = "lost"
            return summary
        current = self.engine.get_session(session_id)
        summary.status = current["reconciliation_status"] if current else status
        return summary

    async def _keep_claim(self, session_id: str) -> None:
        while True:
            await asyncio.sleep(self.options.lease_seconds / 3)
            if not self.engine.renew_claim(session_id, self.owner, self.options.lease_seconds):
                return

    async def _work(self, session_id: str, summary: ReconciliationSummary) -> None:
        hashes: set[str] = set()
        units = self.engine.reconcilable_units(session_id)
        for unit in units:
            prepared = prepare_unit(
                unit["text"], self.tokenizer, self.options.chunk_tokens, self.options.chunk_overlap
            )
            hashes.update(c.hash for c in prepared.chunks)
            if prepared.content_hash != unit.get("content_hash"):
                self.engine.set_unit_chunks(
                    unit["unit_kind"],
                    unit["unit_id"],
                    prepared.content_hash,
                    [{"hash": c.hash, "text": c.text} for c in prepared.chunks],
                )
        summary.units, summary.texts_considered = len(units), len(hashes)
        todo = self.engine.unextracted_chunks(session_id, self.workspace)
        outcomes = await asyncio.gather(
            *(self._extract(chunk, summary) for chunk in todo), return_exceptions=True
        )
        summary.texts_deduped = summary.texts_considered - summary.chunks_extracted
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _extract(self, chunk: dict[str, Any], summary: ReconciliationSummary) -> None:
        """Extract one chunk, or wait for the task of the session already doing it."""
        task = self._inflight.get(chunk["hash"])
        if task is not None:
            await task
            return
        if len(chunk["text"]) < MIN_EXTRACT_CHARS:
            self.engine.save_extraction(chunk["hash"], self.workspace, [], [])
            return
        task = asyncio.create_task(self._extract_and_save(chunk["hash"], chunk["text"]))
        self._inflight[chunk["hash"]] = task
        result = await task
        summary.chunks_extracted += 1
        summary.llm_calls += result.llm_calls
        summary.chars_sent += result.chars_sent
        summary.entities += len(result.entities)
        summary.relations += len(result.relations)

    async def _extract_and_save(self, chunk_hash: str, text: str) -> Extraction:
        try:
            result = await self.extractor.extract(chunk_hash, text)
        except BaseException:
            self._inflight.pop(chunk_hash, None)  # a later session may try again
            raise
        self.engine.save_extraction(chunk_hash, self.workspace, result.entities, result.relations)
        return result


async def reconcile_session(
    engine: Engine,
    settings: Settings,
    session_id: str,
    options: RunOptions,
    llm_model_func: LLMFunc | None = None,
) -> ReconciliationSummary:
    """Reconcile one session now, whatever its status, unless a live run holds it."""
    run = Run(engine, settings, llm.resolve(settings, llm_model_func), options)
    claimed = engine.claim_sessions(run.owner, options.lease_seconds, 1, session_id=session_id)
    if not claimed:
        if engine.get_session(session_id) is None:
            raise MemoryValidationError(f"unknown session {session_id!r}")
        return ReconciliationSummary(
            session_id=session_id,
            status="busy",
            workspace=run.workspace,
            error="another reconciliation run holds this session",
        )
    return await run.reconcile_claimed(claimed[0])


async def reconcile_pending(
    engine: Engine,
    settings: Settings,
    options: RunOptions,
    llm_model_func: LLMFunc | None = None,
    *,
    limit: int = 50,
    retry_failed: bool = False,
    on_claimed: Callable[[list[str]], None] | None = None,
    on_result: Callable[[ReconciliationSummary], None] | None = None,
) -> list[ReconciliationSummary]:
    """Claim up to ``limit`` waiting sessions (oldest first) and reconcile them
    concurrently; returns their summaries in claim order."""
    run = Run(engine, settings, llm.resolve(settings, llm_model_func), options)
    claimed = engine.claim_sessions(
        run.owner, options.lease_seconds, limit, include_failed=retry_failed
    )
    if on_claimed is not None:
        on_claimed([r["session_id"] for r in claimed])
    tasks = [asyncio.create_task(run.reconcile_claimed(r)) for r in claimed]
    for finished in asyncio.as_completed(tasks):
        summary = await finished
        if on_result is not None:
            on_result(summary)
    return [t.result() for t in tasks]
