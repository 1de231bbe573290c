"""The local extractor: entities of a coding session with no LLM, no key, no network.

``patterns`` finds files, modules, packages, tools, URLs, hosts, errors,
identifiers, environment variable names, branches, issues and versions;
``ner`` adds people, organisations, products and places from prose when the
optional ``local`` extra is installed. ``vocabulary`` holds
the one list of entity types both use.

Relations are co-mentions: every two entities of a chunk are linked
(``DIRECTED``, from the one found first), with how often they are named
together as the weight and the patterns that found them as keywords, so that
"which files did we touch with tenacity?" has an answer. The result has the
LLM path's shape (``Extraction``), and is stored by the same engine call.

Nothing here imports LightRAG or an LLM SDK; spaCy loads only when a run
asks for named entities.
"""

from __future__ import annotations

import asyncio
from itertools import combinations
from typing import Any

from sessions_graph.reconcile.extraction import Extraction
from sessions_graph.reconcile.local import ner
from sessions_graph.reconcile.local.patterns import Findings, extract_patterns
from sessions_graph.reconcile.local.vocabulary import ENTITY_TYPES, NER_TYPES

__all__ = ["ENTITY_TYPES", "NER_TYPES", "LocalExtractor"]

#: The name a run, a summary and an extraction mark give this extractor.
NAME = "local"
#: Entities of one chunk that get co-mention relations (the most named
#: first): a log listing 80 files would otherwise make 3,160 relations.
MAX_LINKED = 12


class LocalExtractor:
    """Extracts chunks with patterns, and with the named-entity model if wanted
    and installed (``use_ner=None``: if installed)."""

    name = NAME

    def __init__(self, *, use_ner: bool | None = None, quiet: bool = False) -> None:
        self._quiet = quiet
        self._loaded = use_ner is False
        self._model: Any = None

    @property
    def uses_ner(self) -> bool:
        """Whether the named-entity model runs (loading it on first ask: about
        two seconds, which a run with nothing to extract never pays)."""
        if not self._loaded:
            # The hint for a missing extra is printed once per process.
            self._model = ner.load_model(quiet=self._quiet)
            self._loaded = True
        return self._model is not None

    def extract_many(self, texts: list[str]) -> list[Extraction]:
        """Extract several chunks; the model reads their prose in one batch."""
        found = [extract_patterns(text) for text in texts]
        if texts and self.uses_ner:
            prose = [ner.prose_worth_reading(text) for text in texts]
            wanted = [i for i, p in enumerate(prose) if p]
            named = ner.entities(self._model, [prose[i] for i in wanted])
            for i, pairs in zip(wanted, named, strict=True):
                for name, kind in pairs:
                    found[i].add(name, kind, "named entity")
        return [_extraction(f) for f in found]

    def extract_text(self, text: str) -> Extraction:
        return self.extract_many([text])[0]

    async def extract(self, chunk_hash: str, text: str) -> Extraction:
        """The pipeline's call: in a thread, so that a long chunk never holds
        up the event loop (and the lease keepers on it)."""
        return await asyncio.to_thread(self.extract_text, text)


def _extraction(found: Findings) -> Extraction:
    items = list(found)
    entities = [
        {"name": f.name, "entity_type": f.entity_type, "description": _describe(f.keyword)}
        for f in items
    ]
    linked = sorted(items, key=lambda f: -f.count)[:MAX_LINKED]
    order = {id(f): i for i, f in enumerate(items)}
    linked.sort(key=lambda f: order[id(f)])
    relations = [
        {
            "source": a.name,
            "target": b.name,
            "description": f"{a.name} and {b.name} are named in the same text",
            "keywords": ", ".join(dict.fromkeys(["co-mention", a.keyword, b.keyword])),
            "weight": float(min(a.count, b.count)),
        }
        for a, b in combinations(linked, 2)
    ]
    return Extraction(entities=entities, relations=relations)


def _describe(keyword: str) -> str:
    """A mention's description: how the chunk names it, never the text around
    it (which may hold a value, such as an environment variable's)."""
    return f"found by the local extractor ({keyword})"
