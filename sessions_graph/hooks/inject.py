"""What the hook hands back to the agent: context from the user's past sessions.

Claude Code (and Codex, for ``SessionStart``) add a hook's
``hookSpecificOutput.additionalContext`` to the model's context when the hook
exits 0 with that JSON object, and nothing else, on stdout::

    {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}

(Codex validates the object strictly, so it carries no other key.) Two events
inject:

* ``SessionStart`` (startup, resume, clear, compact): where the user left off
  in this project: the last few other sessions, each dated, with its first
  request and last answer, then the user's memories that fit them best.
  Within ``inject_session_start_tokens``.
* ``UserPromptSubmit``: recall on the prompt, other sessions only, and only
  the hits above a relevance floor (``above_floor``): "thanks" or "go on"
  injects nothing. Within ``inject_prompt_tokens``.

A budget of 0 turns an event's injection off. Tokens are estimated at four
characters each: the hook cannot afford a tokenizer, and the budgets are
ceilings, not targets.

Nothing is injected twice in a session: each injection is noted in the
injection ledger (its items: ``turn:<action_id>``, ``memory:<memory_id>``,
and its estimated tokens), one small write, and the items already noted for
the session (read on an index) are left out. The notice that this is data,
and the footer naming the recall tool as the client shows it, are said once:
at SessionStart, and in the first injection of a session that had none.

Injected text is data, not instructions: everything sits inside one
``<sessions-graph-memory>`` element whose one-line header says so; each item is
dated and names its session; quoted text is JSON-escaped on one line (so it
can neither close the element nor pass for the user's own words), and passed
through the secret redactor that reconciliation uses.

Reads use engine records directly: the façade's readers build pydantic
models, which the hook path never loads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from sessions_graph.hooks.block import (
    FIRST_BLOCK,
    QUOTE_CHARS,
    RECALL_TOOL,
    Block,
    fit,
    quote,
    when,
)
from sessions_graph.project import Project, project_name, project_of

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Sessions shown at SessionStart, at most (the budget may show fewer).
RECENT_SESSIONS = 3
#: Memories shown at SessionStart, at most.
START_MEMORIES = 5
#: Characters read past a quote's end, so that a secret that starts in the
#: quote is whole when the redactor sees it (an old store's turns, recorded
#: before action redaction, may hold one).
REDACTION_MARGIN = 400

_TOKEN = re.compile(r"[^\W_]+")


def hook_output(event: str, context: str) -> str:
    """The JSON object the runtime reads from the hook's stdout."""
    # ASCII escapes: the runtime decodes them, and no locale of the hook
    # process can fail to encode the answer.
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    )


def client_of(payload: dict[str, Any]) -> str:
    """Which agent runtime sent the event: Codex names its rollout file as
    the transcript (``rollout-*.jsonl`` under ``.codex``), Claude Code the rest."""
    from sessions_graph.provenance import transcript_client

    transcript = payload.get("transcript_path")
    return transcript_client(transcript) if isinstance(transcript, str) else "claude-code"


def context_for(
    graph: SessionsGraph, settings: Settings, payload: dict[str, Any], user_id: str
) -> str | None:
    """The context to inject for this (already recorded) event, or None;
    what it holds is noted in the injection ledger first."""
    event = payload.get("hook_event_name")
    session_id = payload.get("session_id")
    if event == "SessionStart":
        budget = settings.inject_session_start_tokens
        build = _start_builder
    elif event == "UserPromptSubmit":
        budget = settings.inject_prompt_tokens

        def build(*args: Any) -> tuple[str, list[str]] | None:
            return prompt_context(*args, projects=settings.inject_projects)

    else:
        return None
    if budget <= 0 or not isinstance(session_id, str):
        return None
    injected = graph.engine.injected_items(user_id, session_id)
    # The notice and the tool's name once per session: at its start (a
    # compacted conversation starts again), or in its first injection.
    block = Block(
        tool=RECALL_TOOL[client_of(payload)], notice=event == "SessionStart" or not injected
    )
    found = build(graph, payload, user_id, budget, injected, block)
    if found is None:
        return None
    from sessions_graph.recall.render import estimate_tokens

    context, items = found
    graph.record_injection(user_id, session_id, event, items, estimate_tokens(context))
    return context


def _start_builder(
    graph: SessionsGraph,
    payload: dict[str, Any],
    user_id: str,
    budget: int,
    injected: Collection[str],
    block: Block,
) -> tuple[str, list[str]] | None:
    """After a compaction or a resume, the session's own story so far
    (``hooks.interactions``); otherwise where the user left off."""
    from sessions_graph.hooks.interactions import resumed_context

    return resumed_context(graph, payload, user_id, budget, block) or session_start_context(
        graph, payload, user_id, budget, injected, block
    )


def session_start_context(
    graph: SessionsGraph,
    payload: dict[str, Any],
    user_id: str,
    budget_tokens: int,
    injected: Collection[str] = frozenset(),
    block: Block = FIRST_BLOCK,
) -> tuple[str, list[str]] | None:
    """Where the user left off in the project of the payload's cwd: its last
    sessions with substance, each shown by its digest, then this project's
    memories and those saved with no project; with the ids of the items
    shown. None when there is nothing to say (a first session, everything
    injected already, or a budget too small for one item)."""
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    project = project_of(cwd)
    key = project.key if project else None
    current = payload.get("session_id")
    rows = graph.recent_sessions(
        user_id,
        project_key=key,
        limit=RECENT_SESSIONS * 3 + 1,
        preview_chars=QUOTE_CHARS + REDACTION_MARGIN,
    )
    # A session whose line shows only what was injected already is not repeated.
    sessions = _sessions_with_substance(
        graph,
        user_id,
        [r for r in rows if r["session_id"] != current],
        keep=lambda r: not set(_session_items(r)) <= set(injected),
    )
    memories = [
        m
        for m in _start_memories(graph, user_id, project, sessions)
        if f"memory:{m['memory_id']}" not in injected
    ]
    if not sessions and not memories:
        return None
    where = f"project {quote(project.name, 80)}" if project else "any project"
    session_lines = [(_session_items(r), lambda n, r=r: _session_line(r, n)) for r in sessions]
    memory_lines = [
        ([f"memory:{m['memory_id']}"], lambda n, m=m: _memory_line(m, n)) for m in memories
    ]
    return fit(
        budget_tokens,
        [
            (f"Where this user left off in {where} (most recent first):", session_lines),
            ("Memories this user saved that may matter here:", memory_lines),
        ],
        kind="where-you-left-off",
        block=block,
    )


def _session_items(row: dict[str, Any]) -> list[str]:
    """The ledger ids of what a session's line shows: the turns its digest
    quotes (``sources``; an LLM's digest, written from the same session,
    keeps the offline one's; a digest stored before digests named them has
    its first request stand for it), and the last answer when it is shown."""
    digest = row["digest"]
    ids = list(digest.get("sources") or [row.get("first_user_message_id")])
    if _shows_last_answer(row):
        ids.append(row.get("last_assistant_message_id"))
    return [f"turn:{i}" for i in dict.fromkeys(ids) if i]


def _shows_last_answer(row: dict[str, Any]) -> bool:
    """The last answer is shown unless the digest says what it left open or decided."""
    digest = row["digest"]
    return bool(row["last_assistant_message"]) and not (
        digest.get("open") or digest.get("decisions")
    )


def _sessions_with_substance(
    graph: SessionsGraph,
    user_id: str,
    rows: list[dict[str, Any]],
    keep: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """The first ``RECENT_SESSIONS`` of ``rows`` (newest first) that have
    substance and that ``keep`` keeps, each with its ``digest`` body. A
    session without a digest, or with one older than its last actions (one
    still going, or a runtime that never sends SessionEnd), gets its offline
    digest built now and kept."""
    rows = [r for r in rows if r["action_count"]]
    digests = {
        d["session_id"]: d
        for d in graph.engine.session_digests(user_id, [r["session_id"] for r in rows])
    }
    kept = []
    for row in rows:
        digest = digests.get(row["session_id"])
        if digest is None or digest["action_count"] < row["action_count"]:
            graph.build_digest(row["session_id"])
            digest = graph.engine.get_digest(row["session_id"])
        if digest is None or not digest["substance"]:
            continue  # "hello", "ok": nothing to pick up
        row = {**row, "digest": digest["body"]}
        if not keep(row):
            continue
        kept.append(row)
        if len(kept) == RECENT_SESSIONS:
            break
    return kept


def _in_project(memory: dict[str, Any], key: str | None) -> bool:
    """A memory shown in project ``key``: one saved there, or with no project."""
    return memory.get("project_key") in (None, key)


def _start_memories(
    graph: SessionsGraph, user_id: str, project: Project | None, sessions: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """This project's memories and those of no project that share words with
    the project name and the recent goals (most relevant first), then the
    newest ones. Another project's never: what was saved in one client's
    project is not shown in another's."""
    from sessions_graph.query import Or, Term

    key = project.key if project else None
    words: dict[str, None] = {}
    texts = [project.name if project else ""]
    texts += [s["digest"].get("goal") or s["first_user_message"] or "" for s in sessions]
    for text in texts:
        words.update(dict.fromkeys(topic_words(text)))
    found: list[dict[str, Any]] = []
    if words:
        query = Or(tuple(Term((w,)) for w in list(words)[:32]))
        hits = graph.engine.search_memories(user_id, query, START_MEMORIES * 10)
        found = [m for m in hits if _in_project(m, key)][:START_MEMORIES]
    seen = {m["memory_id"] for m in found}
    for memory in graph.engine.list_memories(user_id, START_MEMORIES * 20):
        if len(found) >= START_MEMORIES:
            break
        if memory["memory_id"] not in seen and _in_project(memory, key):
            found.append(memory)
    return found


def _session_line(row: dict[str, Any], quote_chars: int) -> str:
    from sessions_graph.digest import render

    digest = row["digest"]
    line = f"- {when(row['started_at'])}, session {row['session_id']}: "
    line += render(digest, lambda text: quote(text, quote_chars))
    if _shows_last_answer(row):
        line += f"; last answer {quote(row['last_assistant_message'], quote_chars)}"
    return line


def _memory_line(memory: dict[str, Any], quote_chars: int) -> str:
    source = f", session {memory['session_id']}" if memory.get("session_id") else ""
    return f"- ({when(memory['created_at'])}{source}) {quote(memory['content'], quote_chars)}"


# -- UserPromptSubmit: past turns that bear on the prompt ---------------------------
#: Recall hits asked for; the floor usually keeps fewer.
PROMPT_HITS = 8
#: Topic words of the prompt searched for, at most (the first ones).
PROMPT_TERMS = 8
#: Longest prompt passed to recall, in characters (its own limit is higher;
#: the opening of a long paste says what it is about).
PROMPT_QUERY_CHARS = 500
#: Quote lengths tried for a recalled item at UserPromptSubmit.
_PROMPT_QUOTE_STEPS = (400, 200, 100)
#: Words that carry no topic in a prompt: replies to the agent ("thanks",
#: "go on", "ok do it"). With recall's stop words they never count as evidence.
FILLER_WORDS = frozenset(
    """
    ok okay yes yeah yep no nope sure thanks thank thx please pls go on continue
    proceed next done good great nice cool fine perfect right lgtm agreed again
    keep going start stop try retry more less it that this do does did make sense
    sounds looks works hmm hi hello hey
    """.split()
)
#: A hit is shown only if its text holds at least this share of the prompt's
#: topic words...
MIN_COVERAGE = 0.34
#: ... and at least this many of them (fewer if the prompt has fewer).
MIN_MATCHED = 2


#: The higher floor of another project's hit (``inject_projects = labelled``):
#: it must cover most of the prompt's topic to be worth crossing projects.
OTHER_PROJECT_COVERAGE = 0.6
OTHER_PROJECT_MATCHED = 3


def topic_words(text: str) -> list[str]:
    """The words of ``text`` that carry its topic, each once, in order:
    lowercased runs of letters and digits of two or more characters, without
    recall's stop words and the filler of replies to an agent."""
    from sessions_graph.index_text.words import STOP_WORDS

    words = dict.fromkeys(m.group().lower() for m in _TOKEN.finditer(text))
    return [w for w in words if len(w) > 1 and w not in STOP_WORDS and w not in FILLER_WORDS]


def _matches(word: str, tokens: set[str]) -> bool:
    """``word`` occurs in ``tokens``, or shares a stem with one (one is a
    prefix of the other and the shorter has 4+ characters: cache/caches,
    deploy/deployed), as the embedded engine's stemming would find it."""
    if word in tokens:
        return True
    if len(word) < 4:
        return False
    return any((t.startswith(word) or (len(t) >= 4 and word.startswith(t))) for t in tokens)


def above_floor(
    prompt_words: Collection[str],
    hit_text: str,
    min_matched: int = MIN_MATCHED,
    min_coverage: float = MIN_COVERAGE,
) -> bool:
    """The relevance floor: recall ranks by fused rank (reciprocal rank over
    its lanes), which always puts *something* first, so its score says
    nothing about whether the best hit is any good. What does is how much
    of the prompt's topic the hit's own text covers: at least
    ``min_matched`` of its topic words (all of them for a shorter topic) and
    at least ``min_coverage`` of them."""
    if not prompt_words:
        return False
    tokens = {m.group().lower() for m in _TOKEN.finditer(hit_text)}
    matched = sum(_matches(w, tokens) for w in prompt_words)
    return matched >= min(min_matched, len(prompt_words)) and (
        matched / len(prompt_words) >= min_coverage
    )


def prompt_context(
    graph: SessionsGraph,
    payload: dict[str, Any],
    user_id: str,
    budget_tokens: int,
    injected: Collection[str] = frozenset(),
    block: Block = FIRST_BLOCK,
    projects: str = "labelled",
) -> tuple[str, list[str]] | None:
    """Past turns and memories of other sessions that bear on the prompt,
    best first, only those above the floor (``above_floor``) and not
    injected in this session already, with the ids of the items shown; None
    when nothing is left: a prompt like "thanks" or "go on" has no topic
    words and injects nothing.

    This project's hits (and memories of no project) come first. Another
    project's, by ``projects`` (the ``inject_projects`` setting): ``this``
    never; ``labelled`` only above a higher floor; ``all`` at the same floor;
    either way labelled with its project's name."""
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        return None
    words = topic_words(prompt[:PROMPT_QUERY_CHARS])
    if not words:
        return None
    from sessions_graph.recall.core import recall

    # Recall is asked for the topic words alone: every term costs a pass
    # over its postings, and filler or function words find nothing useful.
    result = recall(
        graph.engine,
        user_id,
        " ".join(words[:PROMPT_TERMS]),
        limit=PROMPT_HITS,
        session_id=payload.get("session_id"),
        scope=["turns", "memories"],
        feedback_influence=graph.settings.feedback_influence,
    )
    current = payload.get("session_id")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    here = project_of(cwd)
    projects_of: dict[str, str | None] = {}  # session id -> its project key
    hits = []
    shown: set[tuple[str | None, str]] = set()  # (session, line) already in a kept window
    for hit in result["hits"]:
        lines = [line.strip() for line in (hit.get("text") or "").splitlines() if line.strip()]
        # A turn hit is its exchange (or its turn with its neighbours), the
        # turns that matched marked ">>"; the floor judges a matched turn's
        # own words, not what surrounds it.
        own = [line for line in lines if line.startswith(">>")]
        if hit.get("session_id") == current or not lines:
            continue
        key = _hit_project(graph, hit, projects_of)
        elsewhere = key is not None and key != (here.key if here else None)
        if elsewhere and here is not None:
            # Identical text said here too (collapsed into another project's
            # hit, ``also_in``): it is this project's, shown by its session here.
            hit, key, elsewhere = _here_too(graph, hit, key, here.key, projects_of)
        if elsewhere and projects == "this":
            continue
        strict = elsewhere and projects == "labelled"
        floor = (OTHER_PROJECT_MATCHED, OTHER_PROJECT_COVERAGE) if strict else ()
        if not any(above_floor(words, line, *floor) for line in own or [" ".join(lines)]):
            continue
        lines, items = _not_injected(hit, lines, injected)
        own = [line for line in lines if line.startswith(">>")]
        if not own and hit.get("kind") != "memory":
            continue  # what matched was shown in this session already
        if not items:
            continue
        session = hit.get("session_id")
        if own:
            if all((session, _line_key(line)) in shown for line in own):
                continue  # a neighbour of a turn already shown
            shown.update((session, _line_key(line)) for line in lines)
        label = project_name(key) if elsewhere else None
        entry = {**hit, "text": " | ".join(lines), "project": label}
        if hit.get("exchange"):  # the turns of it still shown, for the interaction
            entry["exchange"] = [i.removeprefix("turn:") for i in items]
        hits.append((entry, items))
    if not hits:
        return None
    hits.sort(key=lambda h: h[0]["project"] is not None)  # this project's first, in rank order
    found = fit(
        budget_tokens,
        [
            (
                "Past turns and memories of this user that match this prompt (best first):",
                [(items, lambda n, h=h: _hit_line(h, n)) for h, items in hits],
            )
        ],
        kind="relevant-past",
        steps=_PROMPT_QUOTE_STEPS,
        block=block,
    )
    if found is not None:
        from sessions_graph.hooks.interactions import record_prompt_interaction

        record_prompt_interaction(graph, payload, user_id, [h for h, _ in hits], found[0])
    return found


def _not_injected(
    hit: dict[str, Any], lines: list[str], injected: Collection[str]
) -> tuple[list[str], list[str]]:
    """A hit's lines and ledger ids without what this session was shown
    already: a memory, or the turns of an exchange (one line each, in the
    order of ``exchange``; the request shown at SessionStart is not shown
    again with its reply). A turn shown with its neighbours is kept or left
    out whole."""
    if hit.get("kind") == "memory":
        item = f"memory:{hit['memory_id']}"
        return (lines, [item]) if item not in injected else ([], [])
    ids = [f"turn:{a}" for a in hit.get("exchange") or [hit.get("action_id")] if a]
    if len(ids) != len(lines):  # a turn with its neighbours: its own id stands for it
        return (lines, ids) if not set(ids) & set(injected) else ([], [])
    kept = [(i, line) for i, line in zip(ids, lines, strict=True) if i not in injected]
    return [line for _, line in kept], [i for i, _ in kept]


def _line_key(line: str) -> str:
    """A window line without its ">>" mark, as far as a neighbour shows it."""
    return line.removeprefix(">>").strip()[:100]


def _hit_project(
    graph: SessionsGraph, hit: dict[str, Any], known: dict[str, str | None]
) -> str | None:
    """The project a hit was recorded in: a memory's own, a turn's session's
    (read once per session)."""
    if hit.get("kind") == "memory":
        return hit.get("project_key")
    session = hit.get("session_id")
    return _session_project(graph, session, known) if session else None


def _session_project(
    graph: SessionsGraph, session: str, known: dict[str, str | None]
) -> str | None:
    if session not in known:
        row = graph.engine.get_session(session)
        known[session] = row.get("project_key") if row else None
    return known[session]


def _here_too(
    graph: SessionsGraph,
    hit: dict[str, Any],
    key: str | None,
    here: str,
    known: dict[str, str | None],
) -> tuple[dict[str, Any], str | None, bool]:
    """A turn hit of another project whose identical text was also said in
    this one: attributed to the first of those sessions here (the other ones
    named by ``also_in``), so that it is neither labelled as another
    project's nor held to that project's higher floor. Else unchanged."""
    also = [s for s in hit.get("also_in") or () if isinstance(s, str)]
    local = next((s for s in also if _session_project(graph, s, known) == here), None)
    if hit.get("kind") == "memory" or local is None:
        return hit, key, True
    others = [hit["session_id"], *(s for s in also if s != local)]
    return {**hit, "session_id": local, "also_in": others}, here, False


def _hit_line(hit: dict[str, Any], quote_chars: int) -> str:
    source = f", session {hit['session_id']}" if hit.get("session_id") else ""
    what = "memory" if hit.get("kind") == "memory" else "turn"
    if hit.get("project"):
        source += f", project {quote(hit['project'], 80)}"
    also = len(hit.get("also_in") or ())
    if also:
        what += f", also in {also} session{'s' if also > 1 else ''}"
    return f"- ({when(hit.get('timestamp'))}{source}, {what}) {quote(hit.get('text'), quote_chars)}"
