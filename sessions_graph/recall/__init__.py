"""Recall: a user's past turns, memories and entities back for a question.

This is the plain layer: dicts in, dicts out, end to end, like the engines.
``sessions_graph.recall.core.recall(engine, user_id, query, ...)`` returns
``{"user_id", "query", "hits"}``, ``sessions_graph.recall.render.render(hits,
max_tokens, query)`` turns hits into text an agent can read and ``to_json``
(here) writes a result as JSON. The façade (``SessionsGraph.recall``) wraps the same result into the
pydantic ``RecallResult``; the hook process, which injects recall results
into an agent's context, calls this layer directly because importing
pydantic alone costs ~80 ms there. Keep this package's imports light (``re``,
``datetime``, the package's own plain modules): ``python -X importtime``.

Modules: ``request`` (input rules; a question's words come from ``index_text``),
``dates`` (time bounds, dates a question names), ``lanes`` (one engine
operation each), ``fusion`` (reciprocal rank fusion), ``exchange`` (a request
and its reply as one hit, identical texts as one), ``render`` (snippets,
the token budget), ``core`` (one recall).
"""

from __future__ import annotations

from typing import Any


def recall(engine: Any, user_id: str, query: str, **options: Any) -> dict[str, Any]:
    """See ``sessions_graph.recall.core.recall``."""
    from sessions_graph.recall.core import recall as run

    return run(engine, user_id, query, **options)


def to_json(result: dict[str, Any]) -> str:
    """A result as JSON, as ``RecallResult.to_json`` writes it (unset fields left out)."""
    import json

    hits = [{k: v for k, v in hit.items() if v is not None} for hit in result["hits"]]
    return json.dumps({**result, "hits": hits}, ensure_ascii=False, separators=(",", ":"))
