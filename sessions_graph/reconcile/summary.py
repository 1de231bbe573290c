"""What one reconciliation run did to one session, and what it cost."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ReconciliationSummary(BaseModel):
    """The result of ``reconcile_session`` (and one row of a sweep).

    ``status`` is the session's status after the run: ``reconciled``,
    ``failed``, ``pending`` (content arrived during the run, so it is queued
    again), ``busy`` (another run holds it; nothing was done) or ``lost``
    (the claim expired and was taken over; the other run finishes it).

    Counting is by chunk: ``texts_considered`` distinct chunk texts in the
    session, of which ``texts_deduped`` were already extracted (by an earlier
    run, or by another session of the same sweep) and ``chunks_extracted``
    were sent to the LLM by this run. ``entities`` and ``relations`` are what
    this run's LLM calls found; ``entities_linked`` is how many entities the
    session mentions after the run, dedup included. ``llm_calls`` counts the
    requests sent to the model, retries and failed ones included (a failed
    session reports what it spent); ``chars_sent`` counts every character of
    every prompt sent (system prompt and history included). ``duration_s``
    is the run's wall-clock time for the session, to the millisecond.
    """

    model_config = ConfigDict(extra="ignore")

    session_id: str
    status: str
    workspace: str
    #: Which extractor ran: ``llm`` (LightRAG) or ``local`` (patterns and the
    #: optional named-entity model; no LLM calls).
    extractor: str = "llm"
    units: int = 0
    texts_considered: int = 0
    texts_deduped: int = 0
    chunks_extracted: int = 0
    entities: int = 0
    relations: int = 0
    entities_linked: int = 0
    #: How the session's digest came out: ``llm`` (one request, counted in
    #: ``llm_calls``), ``llm-kept`` (the LLM's digest of this same content was
    #: there: no request), ``offline`` (no LLM in this run, or a session with
    #: no substance), or None (the run failed before it).
    digest: str | None = None
    llm_calls: int = 0
    chars_sent: int = 0
    duration_s: float = 0.0
    error: str | None = None
