"""The hook's part in Interactions: a prompt it injected context for is
recorded as one (``record_prompt_interaction``, at ``UserPromptSubmit``),
the turn's reply answers it (``record_turn_answer``, at ``Stop``), and a
session that lost its own earlier turns (a compaction, a resume) gets them
back at ``SessionStart`` (``resumed_context``).

Plain records only: the hook process never loads pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sessions_graph.errors import SessionsGraphError
from sessions_graph.hooks.block import Block, fit, quote, when

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph

#: SessionStart sources after which the model has lost the session's own
#: earlier turns (Claude Code's ``source``).
RESUMED_SOURCES = frozenset({"compact", "resume"})
#: The session's own interactions shown at such a SessionStart, newest first.
RESUMED_INTERACTIONS = 8
#: Unanswered interactions a Stop answers, at most (one per prompt, plus the
#: recall tool's calls in the turn).
ANSWERED_PER_STOP = 5
#: Actions of the turn read for its reply, at most.
REPLY_ACTIONS = 400
#: Longest reply kept as an interaction's answer (the façade cuts it again).
REPLY_CHARS = 8_000
#: How an injected item's line starts in the prompt context (``inject._hit_line``).
_ITEM_LINE = "- ("


def record_prompt_interaction(
    graph: SessionsGraph,
    payload: dict[str, Any],
    user_id: str,
    hits: list[dict[str, Any]],
    context: str,
) -> str | None:
    """Record the prompt as an Interaction whose context is what was
    injected: the first hits, as many as the context shows (the budget keeps
    a prefix of them). Never raises: the injection matters more than its
    record. Returns the interaction's id."""
    session_id = payload.get("session_id")
    prompt = payload.get("prompt")
    if not isinstance(session_id, str) or not isinstance(prompt, str):
        return None
    shown = sum(line.startswith(_ITEM_LINE) for line in context.splitlines())
    try:
        session = graph.engine.get_session(session_id)
        return graph.record_interaction(
            user_id,
            session_id,
            prompt,
            hits[:shown],
            source="prompt",
            seq_from=session["action_count"] if session else 0,
        )
    except SessionsGraphError:
        return None


def record_turn_answer(graph: SessionsGraph, session_id: str, user_id: str) -> int:
    """At the end of a turn, answer the session's unanswered interactions
    with the reply that followed each: the assistant's conversation
    messages after it, and its tool calls' inputs (what ``used`` also
    reads). An interaction still waiting for any reply stays unanswered.
    Returns how many were answered."""
    from sessions_graph.clock import utcnow

    waiting = graph.engine.list_interactions(
        user_id, session_id, utcnow(), ANSWERED_PER_STOP, unanswered=True
    )
    answered = 0
    for row in waiting:
        start = row.get("seq_from")
        if start is None:
            continue
        actions = graph.engine.get_actions_page(session_id, start, REPLY_ACTIONS)
        said, inputs = [], []
        for action in actions:
            if action.get("origin", "conversation") != "conversation":
                continue
            if action["action_type"] == "assistant_message":
                said.append(action["text"])
            elif action["action_type"] == "tool_call":
                inputs.append(action["text"])
        if not said:
            continue
        reply = "\n".join(said)[:REPLY_CHARS]
        tools = "\n".join(inputs)[:REPLY_CHARS]
        if graph.answer_interaction(
            row["interaction_id"], reply, user_id=user_id, tool_inputs=tools
        ):
            answered += 1
    return answered


def resumed_context(
    graph: SessionsGraph,
    payload: dict[str, Any],
    user_id: str,
    budget_tokens: int,
    block: Block,
) -> tuple[str, list[str]] | None:
    """After a compaction or a resume, the session's own story so far: its
    digest (when it has one) and its recent interactions,
    each question with its answer, newest first. None for any other start,
    or when the session has neither (the usual context is injected then).
    With the ids of what it shows, for the injection ledger; what the ledger
    holds already is shown again: the compacted conversation has lost it."""
    from sessions_graph.clock import utcnow

    session_id = payload.get("session_id")
    if payload.get("source") not in RESUMED_SOURCES or not isinstance(session_id, str):
        return None
    digest = _digest(graph, session_id, user_id)
    rows = graph.engine.list_interactions(user_id, session_id, utcnow(), RESUMED_INTERACTIONS)
    if digest is None and not rows:
        return None

    def line(row: dict[str, Any], quote_chars: int) -> str:
        text = f"- ({when(row['created_at'])}) asked {quote(row['question'], quote_chars)}"
        if row.get("answer"):
            text += f"; answered {quote(row['answer'], quote_chars)}"
        return text

    sections = []
    if digest is not None:
        sections.append(
            (
                "This session so far (its digest):",
                [([f"digest:{session_id}"], lambda n, d=digest: f"- {quote(d, n * 4)}")],
            )
        )
    sections.append(
        (
            "This session's recent questions and answers (newest first):",
            [([f"interaction:{r['interaction_id']}"], lambda n, r=r: line(r, n)) for r in rows],
        )
    )
    return fit(budget_tokens, sections, kind="this-session-so-far", block=block)


def _digest(graph: SessionsGraph, session_id: str, user_id: str) -> str | None:
    """The session's digest as one line of text, None when it has none."""
    try:
        found = graph.session_digest(session_id, user_id=user_id)
    except SessionsGraphError:
        return None
    return found["text"] if found and found["text"] else None
