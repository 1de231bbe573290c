"""The lanes: each finds candidates one way and ranks them best first.

* ``keyword``: the question's words over the turn index, where each turn is
  indexed with its neighbouring turns of the same session (a turn that only
  makes sense with the question before it is found by the question's words).
  Tool results count for less: they are long and noisy, and the turn that
  asked for them is usually the better hit. More weights say which turn
  of a matching exchange answers: a turn spoken by the person the
  question names first (its ``speaker`` label, "Caroline: ...") counts
  double, a turn that asks (ends with "?") counts less than the reply,
  one that only asks (tells nothing besides its questions) less still,
  and when the question asks when, a turn that says when (a Time Cue:
  "last week", "two days ago") counts more.
* ``dates``: when the question names a day, month or year (by its date, or
  by a Time Cue of its own: "yesterday", "last week"), its other words over
  the turns said in that window or telling of it (their Told Time: "last
  month", said in April, tells of March), at most ``MAX_DATE_WINDOWS``
  windows; a month without a year ("in June") keeps the matches said in
  that month of any year.
* ``entities`` (only when entities are in the scope): an entity whose name
  the question contains (reconciled entities, the user's own mentions only,
  at most ``ENTITY_UNITS`` per entity) leads to the entity itself and to the
  user's turns whose chunks mention it.
* ``memories``: the question's words over the user's saved Memories.
* ``interactions`` (session-first recall, not fused: placed first): the
  asking session's live interactions whose question or answer holds the
  question's words, most words first, then the newest.

Each lane is one narrow engine operation; the engines never see the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sessions_graph.clock import utcnow
from sessions_graph.engines.base import Engine, Record
from sessions_graph.index_text import words as text_words
from sessions_graph.index_text.turns import asks_when
from sessions_graph.index_text.words import STOP_WORDS
from sessions_graph.query import Or, Term
from sessions_graph.recall.dates import month_of
from sessions_graph.recall.request import Request

#: How many candidates a keyword lane reads; fusion needs more than it returns.
CANDIDATES = 100
#: Most windows the dates lane searches for one question, each twice (the
#: turns said in it, the turns telling of it), besides one search for the
#: months named without a year: each is a full search of the turn index.
MAX_DATE_WINDOWS = 3
#: A tool result's keyword score is multiplied by this.
TOOL_RESULT_WEIGHT = 0.5
#: A turn whose speaker the question names (the first one it names): its
#: score is multiplied by this (on LoCoMo, turn recall@5 +0.045, +0.06 on
#: conversations not tuned on) ...
SPEAKER_WEIGHT = 2.0
#: ... a turn that asks, by this (+0.006; recall@1 +0.03) ...
ASKING_WEIGHT = 0.8
#: ... one that only asks, by this instead: it holds nothing a question
#: looks for, and its reply, which does, is shown with it (one hit per
#: exchange). On LoCoMo, turn recall@5 +0.006 (+0.003 on the held-out
#: pair); 0.3-0.5 measure the same, 0.6-0.8 less ...
ONLY_ASKING_WEIGHT = 0.5
#: ... and a turn that says when, if the question asks when (on LoCoMo's
#: questions of time, recall@1 0.60 -> 0.66, recall@5 0.83 -> 0.86).
TIME_CUE_WEIGHT = 1.3
#: Most of the user's mentions read per entity: an entity the user names
#: everywhere ("docker", tens of thousands of times) costs no more than this.
ENTITY_UNITS = CANDIDATES
#: Longest entity name looked up, in words.
MAX_NAME_WORDS = 4
#: How an entity name's words may be joined ("node.js", "pre-commit", "gpt_4").
_JOINERS = (" ", "-", "_", ".", "")


def keyword(engine: Engine, req: Request) -> list[Record]:
    rows = engine.search_turns(req.user_id, req.terms, CANDIDATES, req.turn_filters())
    return _weighted(rows, req)


def dates(engine: Engine, req: Request) -> list[Record]:
    if not req.windows and not req.months:
        return []
    terms = req.undated_terms or req.terms
    best: dict[str, Record] = {}
    windows = searched_windows(req.windows, MAX_DATE_WINDOWS)
    for since, until in windows:
        # Turns said in the window, then turns telling of it (their Told
        # Time: "last month", said in April, tells of March): two searches,
        # each falling back to the question's common words on its own.
        said = req.turn_filters(since=since, until=until)
        # Said outside the caller's own bounds: none to find. (Both ends are
        # in a window, so one that shrank to an instant still holds it.)
        if not (said["since"] and said["until"] and said["since"] > said["until"]):
            for row in engine.search_turns(req.user_id, terms, CANDIDATES, said):
                best.setdefault(row["action_id"], row)
        told = req.turn_filters(told=(since, until))
        for row in engine.search_turns(req.user_id, terms, CANDIDATES, told):
            best.setdefault(row["action_id"], row)
    if req.months:
        # A month of no year: the other words' matches from that month of any year.
        for row in engine.search_turns(req.user_id, terms, CANDIDATES, req.turn_filters()):
            if month_of(row["timestamp"]) in req.months and row["action_id"] not in best:
                best[row["action_id"]] = row
    return _weighted(list(best.values()), req)


def searched_windows(windows: Sequence[tuple[str, str]], most: int) -> list[tuple[str, str]]:
    """The windows the dates lane searches: overlapping ones merged (a day's
    window reaches days around it, so dates close together are one search),
    then those holding the dates the question names first, at most ``most``.
    Each costs two full searches: a question naming sixty dates must not
    cost a hundred and twenty (37 s for sixty on 100,000 actions)."""
    merged: list[tuple[str, str]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    chosen: list[tuple[str, str]] = []
    for start, _ in windows:  # in the order the question names them
        window = next(w for w in merged if w[0] <= start <= w[1])
        if window not in chosen:
            chosen.append(window)
        if len(chosen) >= most:
            break
    return chosen


def _weighted(rows: list[Record], req: Request) -> list[Record]:
    # The speaker the question names first is its subject ("what did Tim
    # suggest to John?" asks what Tim said): only that one weighs more.
    words = text_words.words(req.query)
    named = {w for w in words if len(w) > 2 and w not in STOP_WORDS}
    speakers = {s: set(text_words.words(s)) for r in rows if (s := r.get("speaker"))}
    said = set().union(*speakers.values()) & named
    subject = {min(said, key=words.index)} if said else set()
    when = asks_when(req.query)
    for row in rows:
        if row["action_type"] == "tool_result":
            row["score"] *= TOOL_RESULT_WEIGHT
        if subject & speakers.get(row.get("speaker"), set()):
            row["score"] *= SPEAKER_WEIGHT
        if row.get("only_asks"):
            row["score"] *= ONLY_ASKING_WEIGHT
        elif row.get("asks"):
            row["score"] *= ASKING_WEIGHT
        if when and row.get("tells_time"):
            row["score"] *= TIME_CUE_WEIGHT
    # Two stable sorts: best score first, and the newest first among equals.
    rows.sort(key=lambda r: r.get("timestamp") or "", reverse=True)
    rows.sort(key=lambda r: r["score"], reverse=True)
    return rows


def entity_names(question: str) -> list[str]:
    """The name keys an entity named in the question could have: every run of
    1-4 words, joined the ways names are written, casefolded."""
    words = text_words.words(question)
    keys: dict[str, None] = {}
    for size in range(1, MAX_NAME_WORDS + 1):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            if size == 1 and run[0] in STOP_WORDS:
                continue
            for joiner in _JOINERS if size > 1 else ("",):
                keys[joiner.join(run)] = None
    return list(keys)


def entities(engine: Engine, req: Request) -> list[Record]:
    """Matching entities, longest name first (the most specific match), each
    with the user's own units that mention it, filtered like turns."""
    keys = entity_names(req.query)
    if not keys:
        return []
    rows = engine.recall_entities(req.user_id, keys, ENTITY_UNITS)
    filters = req.turn_filters()
    for row in rows:
        row["units"] = [u for u in row["units"] if _accepts(filters, u)]
        row["units"].sort(key=lambda u: u.get("timestamp") or "", reverse=True)
    rows = [r for r in rows if r["units"]]
    rows.sort(key=lambda r: (-len(r["name"].split()), -len(r["units"]), r["name"]))
    return rows


def memories(engine: Engine, req: Request, limit: int) -> list[Record]:
    # A long word's pieces are joined back: memories are searched by the
    # words written. (A CJK bigram and a compound's halves stay phrases.)
    words = [Term(("".join(t),) if text_words.is_pieces(t) else t) for t in req.terms]
    node = words[0] if len(words) == 1 else Or(tuple(words))
    rows = engine.search_memories(req.user_id, node, max(limit * 3, 30))
    filters = req.turn_filters()
    filters["exclude_session"] = filters["only_session"] = None  # only turns are left out
    sessions: dict[str, Record | None] = {}
    kept = []
    for row in rows:
        # A memory is in the project it was saved in (its session's, else the
        # one it was saved from), and below its session's directory.
        unit: dict[str, Any] = {
            "session_id": row["session_id"],
            "timestamp": row["created_at"],
            "project_key": row.get("project_key"),
        }
        if req.project and row["session_id"]:
            if row["session_id"] not in sessions:
                sessions[row["session_id"]] = engine.get_session(row["session_id"])
            session = sessions[row["session_id"]] or {}
            unit["project_key"] = unit["project_key"] or session.get("project_key")
            unit["cwd"] = session.get("cwd")
        if _accepts(filters, unit):
            kept.append(row)
    return kept


#: Interactions of the asking session read, at most (newest first): a
#: session's own exchanges, not its whole past.
SESSION_INTERACTIONS = 200


def interactions(engine: Engine, req: Request) -> list[Record]:
    """The asking session's interactions that match the question: at least
    two of its content words (all of them if it has fewer) occur in the
    interaction's question or answer. Each record gets ``matched``, how
    many did."""
    wanted = {w for w in text_words.words(req.query) if len(w) > 1 and w not in STOP_WORDS}
    if not wanted or req.session_id is None:
        return []
    rows = engine.list_interactions(req.user_id, req.session_id, utcnow(), SESSION_INTERACTIONS)
    found = []
    for row in rows:
        said = set(text_words.words(f"{row['question']} {row.get('answer') or ''}"))
        matched = len(wanted & said)
        if matched >= min(2, len(wanted)):
            found.append({**row, "matched": matched})
    found.sort(key=lambda r: r["matched"], reverse=True)  # stable: newest first among equals
    return found


def _accepts(filters: Record, unit: Record) -> bool:
    """Whether a unit ({session_id, timestamp, project_key, cwd}) passes the
    filters the engines apply to turns."""
    stamp = unit.get("timestamp") or ""
    if filters["since"] and stamp < filters["since"]:
        return False
    if filters["until"] and stamp > filters["until"]:
        return False
    session = unit.get("session_id")
    if filters["exclude_session"] and session == filters["exclude_session"]:
        return False
    if filters["only_session"] and session != filters["only_session"]:
        return False
    project = filters["project"]
    return not project or in_project(project, unit.get("project_key"), unit.get("cwd"))


def in_project(project: str, project_key: str | None, cwd: str | None) -> bool:
    """A session is in ``project`` when its project key is it, or its working
    directory is it or below it."""
    if project_key == project or cwd == project:
        return True
    return bool(cwd) and cwd.startswith(project.rstrip("/") + "/")  # type: ignore[union-attr]
