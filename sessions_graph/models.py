"""The public records: what the façade returns to users.

Engines hand back plain dicts with these field names; the façade turns them
into these models. Imported lazily by the façade so hooks never load pydantic.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Memory(_Record):
    """A free-form assertion an agent saved on purpose, owned by one user."""

    memory_id: str
    user_id: str
    content: str
    session_id: str | None = None
    created_at: str
    updated_at: str
    #: The project it was saved in (its session's, else where it was saved
    #: from), None for a memory of no project: shown in every project.
    project_key: str | None = None
    #: Relevance, set on search results only (higher is more relevant).
    score: float | None = None


class Session(_Record):
    """One run of an agent for one user."""

    session_id: str
    user_id: str
    started_at: str | None = None
    ended_at: str | None = None
    cwd: str | None = None
    project_key: str | None = None
    reconciliation_status: str | None = None
    reconciled_at: str | None = None
    reconciliation_error: str | None = None
    last_summary: dict[str, Any] | None = None
    content_version: int = 0
    action_count: int = 0


class Action(_Record):
    """One step of a session: a message, a tool call or a tool result."""

    action_id: str
    session_id: str
    seq: int
    action_type: str
    text: str = ""
    timestamp: str | None = None
    tool_name: str | None = None
    tool_use_id: str | None = None
    is_error: bool = False
    #: How many secrets redaction took out of ``text`` when it was recorded.
    redactions: int = 0
    #: ``conversation``, or ``derived`` (our own output coming back) or
    #: ``client`` (client context): kept, never recalled, injected or extracted.
    origin: str = "conversation"


class EntityMention(_Record):
    """An entity as one session sees it."""

    name: str
    entity_type: str | None = None
    workspace: str
    description: str | None = None
    mentions: int = 0


class RecallHit(_Record):
    """One thing recall found: an interaction of the asking session, a past
    turn, a memory or an entity."""

    kind: str
    #: The fused score: higher is better; comparable within one result only.
    score: float
    #: The retrieval lanes that found it ("keyword", "dates", "entities", "memories").
    lanes: list[str]
    session_id: str | None = None
    timestamp: str | None = None
    #: A readable snippet, secrets redacted; a turn's shows its neighbours too.
    text: str = ""
    action_id: str | None = None
    action_type: str | None = None
    memory_id: str | None = None
    #: A memory's project (None: saved in no project).
    project_key: str | None = None
    entity: str | None = None
    entity_type: str | None = None
    #: The sessions of the user that mention the entity, newest first.
    sessions: list[str] | None = None
    #: The actions a turn hit shows: its exchange (a request and its reply,
    #: a tool call and its result), request first, or just the turn.
    exchange: list[str] | None = None
    #: Other sessions where the same text was found: one hit for all of them.
    also_in: list[str] | None = None
    #: The interaction this hit is (kind "interaction": a question asked in
    #: the asking session, with its answer).
    interaction_id: str | None = None
    #: The user's feedback weight of this element (0-1; 0.5 if never rated).
    feedback_weight: float = 0.5


class RecallResult(_Record):
    """What ``SessionsGraph.recall`` found, best first."""

    user_id: str
    query: str
    hits: list[RecallHit]
    #: The Interaction this recall recorded (None when no session was given):
    #: pass it to ``record_answer`` and ``feedback``.
    interaction_id: str | None = None

    def render(self, max_tokens: int = 1500) -> str:
        """The hits as text an agent can read: dated, attributed to their
        session, within ``max_tokens`` (estimated)."""
        from sessions_graph.recall.render import render

        return render([h.model_dump() for h in self.hits], max_tokens, self.query)

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)


class InteractionItem(_Record):
    """One context item given with an interaction's question."""

    #: The element's key: ``turn:<action_id>``, ``memory:<memory_id>``,
    #: ``entity:<casefolded name>``; its feedback weight is kept under it.
    key: str
    kind: str
    id: str
    text: str = ""
    #: Whether the answer used it (carries one of its distinctive tokens the
    #: question did not); None until the answer is recorded.
    used: bool | None = None


class Interaction(_Record):
    """One question asked within a session, with the context given, the
    answer and the user's rating: the short-term cache, kept for
    ``session_cache_ttl_s``."""

    interaction_id: str
    user_id: str
    session_id: str
    #: Where it was asked: "prompt" (a prompt the hook injected context for),
    #: "recall" (``SessionsGraph.recall`` with a session) or "mcp" (the tool).
    source: str
    created_at: str
    expires_at: str | None = None
    question: str
    context: list[InteractionItem]
    answer: str | None = None
    answered_at: str | None = None
    #: The user's rating, 1 (wrong) to 5 (helped), if any.
    feedback: int | None = None
