"""The reconciliation run: claim, chunk, dedup by hash, extract, finish.

For each claimed session:

1. every unit (Action, produced Memory) is normalised, redacted, truncated
   and chunked; a unit whose content hash is unchanged is left alone, a
   changed one gets its chunk links replaced (the engine collects orphans);
2. the session's chunks not yet extracted into the workspace are claimed
   (in one batch) and sent to LightRAG extraction, each hash once per run
   even when several sessions of the sweep share it (they await the same
   task); a chunk another process's run has claimed is not sent: the session
   polls until that run saves it, or until its claim expires and this run
   can claim and extract it;
3. the run finishes the claim: reconciled (or pending, if content arrived
   meanwhile) with a summary, or failed with the error and the previous
   summary kept.

Leases renewed in the background keep the session claims and the chunk
claims; a killed run's leases expire, and the next sweep takes its sessions
(and any waiting run its chunks) over. Every write is keyed by hash, so
whatever a killed run left is reused, never doubled.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sessions_graph import digest
from sessions_graph.clock import utcnow
from sessions_graph.engines.base import (
    FAILED,
    LLM_EXTRACTOR,
    LOCAL_EXTRACTOR,
    RECONCILED,
    Engine,
)
from sessions_graph.errors import MemoryValidationError
from sessions_graph.reconcile import llm
from sessions_graph.reconcile.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_TOKENS,
    OfflineTokenizer,
    PreparedUnit,
    prepare_unit,
)
from sessions_graph.reconcile.extraction import (
    ChunkExtractor,
    Extraction,
    ExtractionError,
    LLMFunc,
)
from sessions_graph.reconcile.local import LocalExtractor
from sessions_graph.reconcile.summary import ReconciliationSummary
from sessions_graph.redact import redact
from sessions_graph.settings import Settings
from sessions_graph.validation import check_extractor, check_workspace

#: How long a claim lives without renewal; renewed every third of it.
DEFAULT_LEASE_SECONDS = 300.0
#: How often a session waiting for chunks another process is extracting
#: looks again: a read, and a claim attempt if any is still not extracted.
CHUNK_POLL_SECONDS = 1.0
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
    #: ``llm``, ``local`` or ``auto``; None: the ``extractor`` setting.
    extractor: str | None = None


def choose_extractor(
    settings: Settings, options: RunOptions, llm_model_func: LLMFunc | None = None
) -> str:
    """``llm`` or ``local`` for this run: the option, else the setting; ``auto``
    is the LLM when one is configured (or passed in) and its packages (the
    ``reconcile`` extra) import, else the local extractor: an API key in the
    environment of a plain install must not fail every run."""
    choice = check_extractor(options.extractor or settings.extractor or "auto")
    if choice != "auto":
        return choice
    configured = llm_model_func is not None or llm.describe(settings) is not None
    usable = configured and llm.missing_package(settings) is None
    return LLM_EXTRACTOR if usable else LOCAL_EXTRACTOR


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:500]


class Run:
    """One process's run: an owner id for claims, one extractor (so the
    concurrency bound holds across sessions), the in-flight chunk tasks and
    the chunks claimed but not yet saved.

    With the LLM, a chunk counts as to do until the LLM has extracted it, even
    if the local extractor has; with the local extractor, a chunk either has
    done is finished (the LLM's findings are kept, not replaced by fewer)."""

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        options: RunOptions,
        llm_model_func: LLMFunc | None = None,
    ) -> None:
        self.engine = engine
        self.options = options
        self.workspace = check_workspace(
            options.entity_workspace or settings.entity_workspace or "base"
        )
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.tokenizer = OfflineTokenizer()
        self.extractor_name = choose_extractor(settings, options, llm_model_func)
        self.extractor: ChunkExtractor | LocalExtractor
        if self.extractor_name == LLM_EXTRACTOR:
            self.extractor = ChunkExtractor(
                llm.resolve(settings, llm_model_func),
                concurrency=options.concurrency or settings.llm_concurrency,
                gleaning=options.gleaning,
            )
            self.done_by: tuple[str, ...] = (LLM_EXTRACTOR,)
        else:
            self.extractor = LocalExtractor()
            self.done_by = (LLM_EXTRACTOR, LOCAL_EXTRACTOR)
        self._local: LocalExtractor | None = None  # to merge into the LLM's, made on need
        self._locally_done: set[str] = set()  # chunks to merge the local findings of
        self._inflight: dict[str, asyncio.Task[Extraction]] = {}
        self._held: set[str] = set()

    async def reconcile_claimed(self, record: dict[str, Any]) -> ReconciliationSummary:
        """Reconcile a session this run has claimed, and release the claim."""
        session_id = record["session_id"]
        summary = ReconciliationSummary(
            session_id=session_id,
            status=RECONCILED,
            workspace=self.workspace,
            extractor=self.extractor_name,
        )
        started = time.monotonic()
        todo: set[str] = set()  # the session's chunks to extract, filled by _work
        keeper = asyncio.create_task(self._keep_claim(session_id, todo))
        try:
            await self._work(session_id, summary, todo)
            await self._digest(session_id, summary)
            status, error = RECONCILED, None
        except Exception as exc:
            status, error = FAILED, _one_line(exc)
        finally:
            keeper.cancel()
        summary.duration_s = round(time.monotonic() - started, 3)
        summary.status, summary.error = status, error
        if status == RECONCILED:
            mentions = self.engine.session_mentions(session_id)
            summary.entities_linked = len({(m["name"], m["workspace"]) for m in mentions})
            stored = summary.model_dump()
        else:
            stored = record.get("last_summary")  # a failure keeps the last good summary
        if not self.engine.finish_reconciliation(
            session_id, self.owner, status, utcnow(), stored, error
        ):
            summary.status = "lost"
            return summary
        current = self.engine.get_session(session_id)
        summary.status = current["reconciliation_status"] if current else status
        return summary

    async def _keep_claim(self, session_id: str, todo: set[str]) -> None:
        """Renew the session's lease and the claims this run holds on its chunks:
        claimed in one batch, a chunk may wait a long while for an LLM slot."""
        lease = self.options.lease_seconds
        while True:
            await asyncio.sleep(lease / 3)
            if not self.engine.renew_claim(session_id, self.owner, lease):
                return
            held = todo & self._held
            if held:
                self.engine.claim_chunks(
                    sorted(held), self.workspace, self.owner, lease, self.done_by
                )

    async def _work(self, session_id: str, summary: ReconciliationSummary, todo: set[str]) -> None:
        hashes: set[str] = set()
        units = self.engine.reconcilable_units(session_id)
        # Redaction and chunking are CPU work: in a thread, so that the event
        # loop keeps renewing leases and driving the other sessions' LLM calls.
        all_prepared = await asyncio.to_thread(self._prepare, [u["text"] for u in units])
        for unit, prepared in zip(units, all_prepared, strict=True):
            hashes.update(c.hash for c in prepared.chunks)
            if prepared.content_hash != unit.get("content_hash"):
                self.engine.set_unit_chunks(
                    unit["unit_kind"],
                    unit["unit_id"],
                    prepared.content_hash,
                    [{"hash": c.hash, "text": c.text} for c in prepared.chunks],
                )
        summary.units, summary.texts_considered = len(units), len(hashes)
        chunks = self.engine.unextracted_chunks(session_id, self.workspace, self.done_by)
        waiting = {c["hash"]: c["text"] for c in chunks}
        self._locally_done.update(
            c["hash"] for c in chunks if LOCAL_EXTRACTOR in c.get("extracted_by", ())
        )
        todo.update(waiting)
        extractions: list[Awaitable[Any]] = []
        while True:
            extractions += self._start(waiting, summary)
            if not waiting:
                break
            # The rest is another process's: saved by it (then deduped here),
            # or claimable here once its claim expires.
            await asyncio.sleep(CHUNK_POLL_SECONDS)
            left = {
                c["hash"]
                for c in self.engine.unextracted_chunks(session_id, self.workspace, self.done_by)
            }
            waiting = {h: text for h, text in waiting.items() if h in left}
        outcomes = await asyncio.gather(*extractions, return_exceptions=True)
        summary.texts_deduped = summary.texts_considered - summary.chunks_extracted
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _digest(self, session_id: str, summary: ReconciliationSummary) -> None:
        """Write the session's digest: the LLM's when this run extracts with
        one (one request per session, never twice for the same input: the
        prompt's hash is kept with the digest), else the offline one."""
        session = self.engine.get_session(session_id)
        if session is None:
            return
        actions = self.engine.get_actions(session_id)
        body = digest.build(actions, session.get("cwd"))
        record = {
            "session_id": session_id,
            "user_id": session["user_id"],
            "source": digest.OFFLINE,
            "substance": body.pop("substance"),
            "body": body,
            "action_count": len(actions),
            "input_hash": None,
            "built_at": utcnow(),
        }
        if not isinstance(self.extractor, ChunkExtractor) or not record["substance"]:
            self.engine.save_digest(record)
            summary.digest = digest.OFFLINE
            return
        system, prompt = digest.llm_prompt(actions, body)
        prompt = redact(prompt)  # stored redacted; redacted again as every unit is
        hashed = digest.input_hash(system, prompt)
        kept = self.engine.get_digest(session_id)
        if kept is not None and kept["source"] == digest.LLM and kept["input_hash"] == hashed:
            if kept["action_count"] != record["action_count"]:  # new actions, none it reads
                self.engine.save_digest({**kept, "action_count": record["action_count"]})
            summary.digest = "llm-kept"
            return
        try:
            answer, cost = await self.extractor.ask(prompt, system)
        except ExtractionError as exc:
            summary.llm_calls += exc.cost.llm_calls
            summary.chars_sent += exc.cost.chars_sent
            raise
        summary.llm_calls += cost.llm_calls
        summary.chars_sent += cost.chars_sent
        written = digest.parse_llm(answer, body)
        if written is None:  # no usable answer: the offline digest, asked again next run
            self.engine.save_digest(record)
            summary.digest = digest.OFFLINE
            return
        self.engine.save_digest(
            {**record, "source": digest.LLM, "body": written, "input_hash": hashed}
        )
        summary.digest = digest.LLM

    def _prepare(self, texts: list[str]) -> list[PreparedUnit]:
        size, overlap = self.options.chunk_tokens, self.options.chunk_overlap
        return [prepare_unit(text, self.tokenizer, size, overlap) for text in texts]

    def _start(
        self, waiting: dict[str, str], summary: ReconciliationSummary
    ) -> list[Awaitable[Any]]:
        """Start extracting what this run can of ``waiting`` (hash: text) and
        take it out; return what to await. What stays is held by another
        process's run (or was just extracted or collected: the poll drops it).

        No await in here, so that no other session of this run comes between
        looking at the in-flight tasks, claiming, and registering new tasks."""
        started: list[Awaitable[Any]] = []
        for chunk_hash in list(waiting):
            if chunk_hash in self._inflight:  # another session of this run does it
                started.append(self._inflight[chunk_hash])
                del waiting[chunk_hash]
            elif (
                self.extractor_name == LLM_EXTRACTOR
                and len(waiting[chunk_hash]) < MIN_EXTRACT_CHARS
            ):  # no call, and what is saved is the same whoever saves it: no claim
                found = Extraction()
                if chunk_hash in self._locally_done:  # "git status": keep what it named
                    found = self._local_extractor().extract_text(waiting[chunk_hash])
                self.engine.save_extraction(
                    chunk_hash, self.workspace, found.entities, found.relations
                )
                del waiting[chunk_hash]
        if not waiting:
            return started
        claimed = self.engine.claim_chunks(
            list(waiting), self.workspace, self.owner, self.options.lease_seconds, self.done_by
        )
        for chunk_hash in [h for h in waiting if h in claimed]:  # in unit order
            task = asyncio.create_task(self._extract_and_save(chunk_hash, waiting.pop(chunk_hash)))
            self._inflight[chunk_hash] = task
            self._held.add(chunk_hash)
            started.append(self._count(task, summary))
        return started

    def _local_extractor(self) -> LocalExtractor:
        if self._local is None:
            self._local = LocalExtractor(quiet=True)
        return self._local

    @staticmethod
    async def _count(task: asyncio.Task[Extraction], summary: ReconciliationSummary) -> None:
        """Count an extraction this session started in its summary; a failed
        one counts what it sent too."""
        try:
            result = await task
        except ExtractionError as exc:
            summary.llm_calls += exc.cost.llm_calls
            summary.chars_sent += exc.cost.chars_sent
            raise
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
            # A zero lease gives the claim up: a retry, or a run waiting in
            # another process, need not wait the lease out.
            self.engine.claim_chunks([chunk_hash], self.workspace, self.owner, 0.0, self.done_by)
            raise
        finally:
            self._held.discard(chunk_hash)
        entities, relations = result.entities, result.relations
        if self.extractor_name == LLM_EXTRACTOR and chunk_hash in self._locally_done:
            # Saving replaces the chunk's mentions: keep the local extractor's
            # (the same function of the same text gives them back) and add
            # the LLM's, a name both found once.
            local = await self._local_extractor().extract(chunk_hash, text)
            entities, relations = merge_extractions(local, result)
        self.engine.save_extraction(
            chunk_hash, self.workspace, entities, relations, self.extractor_name
        )
        return result


def merge_extractions(
    first: Extraction, second: Extraction
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``first``'s entities and relations with ``second``'s added: a name both
    give (in any case) keeps ``first``'s spelling and type and takes
    ``second``'s description; a pair both relate is one relation with
    ``second``'s description and keywords and the larger weight (both
    extractors give every relation one)."""
    entities: dict[str, dict[str, Any]] = {}
    for entity in first.entities:
        entities.setdefault(entity["name"].casefold(), dict(entity))
    for entity in second.entities:
        key = entity["name"].casefold()
        if key in entities:
            kept = entities[key]
            kept["description"] = entity.get("description") or kept.get("description")
            kept["entity_type"] = kept.get("entity_type") or entity.get("entity_type")
        else:
            entities[key] = dict(entity)

    def canonical(name: str) -> str:
        return str(entities[name.casefold()]["name"]) if name.casefold() in entities else name

    relations: dict[frozenset[str], dict[str, Any]] = {}
    for rel in [*first.relations, *second.relations]:
        source, target = canonical(rel["source"]), canonical(rel["target"])
        if source == target:
            continue
        key = frozenset((source, target))
        merged = {**rel, "source": source, "target": target}
        if key in relations:
            old = relations[key]
            merged["source"], merged["target"] = old["source"], old["target"]
            merged["weight"] = max(float(old["weight"]), float(rel["weight"]))
        relations[key] = merged
    return list(entities.values()), list(relations.values())


async def reconcile_session(
    engine: Engine,
    settings: Settings,
    session_id: str,
    options: RunOptions,
    llm_model_func: LLMFunc | None = None,
) -> ReconciliationSummary:
    """Reconcile one session now, whatever its status, unless a live run holds it."""
    run = Run(engine, settings, options, llm_model_func)
    claimed = engine.claim_sessions(run.owner, options.lease_seconds, 1, session_id=session_id)
    if not claimed:
        if engine.get_session(session_id) is None:
            raise MemoryValidationError(f"unknown session {session_id!r}")
        return ReconciliationSummary(
            session_id=session_id,
            status="busy",
            workspace=run.workspace,
            extractor=run.extractor_name,
            error="another reconciliation run holds this session",
        )
    return await run.reconcile_claimed(claimed[0])


async def reconcile_pending(
    engine: Engine,
    settings: Settings,
    options: RunOptions,
    llm_model_func: LLMFunc | None = None,
    *,
    limit: int,
    retry_failed: bool,
    on_claimed: Callable[[list[str]], None] | None = None,
    on_result: Callable[[ReconciliationSummary], None] | None = None,
) -> list[ReconciliationSummary]:
    """Claim up to ``limit`` waiting sessions (oldest first) and reconcile them
    concurrently; returns their summaries in claim order."""
    run = Run(engine, settings, options, llm_model_func)
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
