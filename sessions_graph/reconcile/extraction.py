"""Entity extraction for one chunk, with LightRAG's own prompts and parser.

We call ``lightrag.operate.extract_entities`` on a single chunk with a
``global_config`` we build ourselves, and we never construct a ``LightRAG``
instance: that would open LightRAG's default storages (JSON KV files, a
GraphML graph) in a working directory, which two processes cannot share
safely, and which would duplicate what our store already records. What comes
back (LightRAG's parsed nodes and edges) is turned into plain records for
``Engine.save_extraction``. No LLM cache is passed: dedup is by chunk hash in
our store, before the LLM is ever called.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from sessions_graph.errors import SessionsGraphError
from sessions_graph.reconcile.chunking import OfflineTokenizer

#: LightRAG's model-function signature:
#: ``async def f(prompt, system_prompt=None, history_messages=[], **kwargs) -> str``.
LLMFunc = Callable[..., Awaitable[str]]


#: Requests the model function sent during the current call, when it says:
#: our OpenAI / Anthropic functions add one per attempt, retries included
#: (``note_request``). A function that does not (a caller's own) counts as
#: one request per call.
_REQUESTS: ContextVar[list[int] | None] = ContextVar("sessions_graph_requests", default=None)


def note_request() -> None:
    """Count one request sent to the model, for the call in progress."""
    box = _REQUESTS.get()
    if box is not None:
        box[0] += 1


@dataclass
class Extraction:
    """What one chunk yielded, and what it cost: ``llm_calls`` counts the
    requests sent (retries included), ``chars_sent`` their prompt characters."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: int = 0
    chars_sent: int = 0


class ExtractionError(SessionsGraphError):
    """The LLM failed (after its retries) on a chunk; the message is the LLM's,
    ``cost`` what was sent before it failed (it is paid for all the same)."""

    def __init__(self, message: str, cost: Extraction) -> None:
        super().__init__(message)
        self.cost = cost


class ChunkExtractor:
    """Extracts chunks through LightRAG, at most ``concurrency`` LLM calls at once.

    One extractor serves a whole sweep, so the bound holds across sessions.
    ``gleaning`` is LightRAG's second "anything missed?" call per chunk; it is
    off by default because it doubles the cost for a modest gain on short,
    conversational text.
    """

    def __init__(
        self,
        llm_func: LLMFunc,
        *,
        concurrency: int,
        gleaning: int = 0,
    ) -> None:
        # Deferred: LightRAG takes about a second to import, and only a run needs it.
        from lightrag.constants import (
            DEFAULT_MAX_EXTRACTION_ENTITIES,
            DEFAULT_MAX_EXTRACTION_RECORDS,
        )
        from lightrag.utils import Tokenizer
        from lightrag.utils import logger as lightrag_logger

        # LightRAG logs one INFO line per chunk on stderr; keep the CLI readable.
        lightrag_logger.setLevel(logging.WARNING)
        self._llm_func = llm_func
        self._semaphore = asyncio.Semaphore(max(1, concurrency))
        self._config: dict[str, Any] = {
            "entity_extract_max_gleaning": gleaning,
            "entity_extract_max_records": DEFAULT_MAX_EXTRACTION_RECORDS,
            "entity_extract_max_entities": DEFAULT_MAX_EXTRACTION_ENTITIES,
            "tokenizer": Tokenizer("sessions-graph-offline", OfflineTokenizer()),
            "addon_params": {},  # LightRAG's default language and entity types
            # One chunk per call; our own semaphore bounds concurrency.
            "llm_model_max_async": 1,
        }

    async def ask(self, prompt: str, system_prompt: str) -> tuple[str, Extraction]:
        """One plain request to the model (a session's digest), under the same
        concurrency bound as extraction and counted the same way: the answer,
        and an ``Extraction`` holding only what it cost. A failure raises
        ``ExtractionError`` carrying that cost."""
        cost = Extraction()
        requests = [0]
        async with self._semaphore:
            token = _REQUESTS.set(requests)
            try:
                answer = await self._llm_func(prompt, system_prompt=system_prompt)
            except Exception as exc:
                message = " ".join(f"{type(exc).__name__}: {exc}".split())
                raise ExtractionError(f"the digest request failed: {message}", cost) from exc
            finally:
                _REQUESTS.reset(token)
                sent = requests[0] or 1
                cost.llm_calls += sent
                cost.chars_sent += sent * (len(prompt) + len(system_prompt))
        return answer, cost

    async def extract(self, chunk_hash: str, text: str) -> Extraction:
        """Run LightRAG's extraction on one chunk; raise if the LLM fails."""
        from lightrag.operate import extract_entities

        result = Extraction()
        failures: list[BaseException] = []

        async def counted(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
            history = kwargs.get("history_messages") or []
            chars = len(prompt) + len(system_prompt or "")
            chars += sum(len(m.get("content") or "") for m in history)
            requests = [0]
            token = _REQUESTS.set(requests)
            try:
                return await self._llm_func(prompt, system_prompt=system_prompt, **kwargs)
            except Exception as exc:
                failures.append(exc)
                raise
            finally:
                _REQUESTS.reset(token)
                sent = requests[0] or 1
                result.llm_calls += sent
                result.chars_sent += sent * chars

        config = {**self._config, "role_llm_funcs": {"extract": counted}}
        chunk = {"content": text, "tokens": 0, "full_doc_id": chunk_hash, "chunk_order_index": 0}
        async with self._semaphore:
            try:
                [(nodes, edges)] = await extract_entities({f"chunk-{chunk_hash}": chunk}, config)
            except Exception as exc:
                # LightRAG re-wraps errors with progress prefixes (and sometimes
                # as RuntimeError); report the model's own failure, on one line.
                cause = failures[0] if failures else exc
                message = " ".join(f"{type(cause).__name__}: {cause}".split())
                raise ExtractionError(
                    f"extraction of chunk {chunk_hash[:12]} failed: {message}", result
                ) from cause
        result.entities = [_entity(name, records) for name, records in nodes.items()]
        result.relations = [_relation(pair, records) for pair, records in edges.items()]
        # A relation may name an entity the model did not list; like LightRAG's
        # own merge, give it a node so that every relation has two ends.
        for name in dict.fromkeys(n for pair in edges for n in pair):
            if name not in nodes:
                result.entities.append({"name": name, "entity_type": "unknown", "description": ""})
        return result


# LightRAG's parser drops a record with an empty field, and gives every
# relation of its text format the weight 1.0: each field below is there.


def _richest(records: list[dict[str, Any]]) -> dict[str, Any]:
    """LightRAG may report a name more than once per chunk; keep the fullest."""
    return max(records, key=lambda r: len(r["description"]))


def _entity(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    best = _richest(records)
    return {"name": name, "entity_type": best["entity_type"], "description": best["description"]}


def _relation(pair: tuple[str, str], records: list[dict[str, Any]]) -> dict[str, Any]:
    best = _richest(records)
    return {
        "source": pair[0],
        "target": pair[1],
        "description": best["description"],
        "keywords": best["keywords"],
        "weight": float(best["weight"]),
    }
