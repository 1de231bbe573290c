"""A recall request, checked: every rule on the caller's input lives here, so
the façade, the CLI, hooks and the MCP server refuse the same things."""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
from collections.abc import Sequence
from typing import NamedTuple

from sessions_graph.clock import utcnow
from sessions_graph.errors import InvalidQueryError, MemoryValidationError
from sessions_graph.index_text.told import question_windows
from sessions_graph.index_text.words import query_terms
from sessions_graph.recall.dates import named_months, named_windows, to_utc
from sessions_graph.validation import check_id, check_optional_id, without_surrogates

#: Longest question accepted, in characters.
MAX_QUERY_CHARS = 1000
#: Most hits one recall returns.
MAX_LIMIT = 100
#: What ``scope`` may name. "session" is the asking session's own turns,
#: which are otherwise left out (the agent asking already has them);
#: "interactions" the asking session's interactions (questions asked in it,
#: with their answers), which come first.
SCOPES = ("turns", "memories", "entities", "session", "interactions")
#: ``scope="all"``: everything except the asking session's own turns.
ALL = ("turns", "memories", "entities")
#: ``scope="auto"`` (the default): session-first recall, the asking
#: session's interactions then everything ``all`` finds; ``all`` when no
#: session is given.
AUTO = "auto"


class Request(NamedTuple):
    """A checked recall call (a NamedTuple: ``dataclasses`` costs an import
    the hook process would pay)."""

    user_id: str
    query: str
    limit: int
    session_id: str | None
    scope: frozenset[str]
    since: str | None
    until: str | None
    project: str | None
    #: The question's search terms (tuples of index tokens, matched as phrases).
    terms: tuple[tuple[str, ...], ...]
    #: Days / months / years the question names, ``[start, end)``; months
    #: it names without a year (1-12); and the terms of the question
    #: without those date words.
    windows: tuple[tuple[str, str], ...] = ()
    months: tuple[int, ...] = ()
    undated_terms: tuple[tuple[str, ...], ...] = ()

    def turn_filters(
        self,
        *,
        since: str | None = None,
        until: str | None = None,
        told: tuple[str, str] | None = None,
    ) -> dict:
        """What the engines' turn search filters on, for this request: when a
        turn was said (the caller's bounds, narrowed by ``since`` / ``until``)
        and, for the dates lane, a window ``[start, end)`` its Told Time
        must overlap."""
        own = self.session_id
        only = own if "session" in self.scope and "turns" not in self.scope else None
        exclude = own if "session" not in self.scope else None
        return {
            "since": max(filter(None, (self.since, since)), default=None),
            "until": min(filter(None, (self.until, until)), default=None),
            "told": told,
            "project": self.project,
            "exclude_session": exclude,
            "only_session": only,
        }


def check_request(
    user_id: object,
    query: object,
    *,
    limit: object = 10,
    session_id: object = None,
    scope: object = "all",
    since: object = None,
    until: object = None,
    project: object = None,
) -> Request:
    """Validate a recall call; ``MemoryValidationError`` / ``InvalidQueryError``
    say what is wrong, before anything is read."""
    check_id(user_id, "user_id")
    check_optional_id(session_id, "session_id")
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, not {type(query).__name__}")
    if not query.strip():
        raise InvalidQueryError("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is longer than {MAX_QUERY_CHARS} characters")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise MemoryValidationError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    scopes = _check_scope(scope)
    if scope == AUTO:
        scopes = scopes | {"interactions"} if session_id is not None else scopes
    for needs in ("session", "interactions"):
        if needs in scopes and session_id is None:
            raise MemoryValidationError(f"scope {needs!r} needs the asking session_id")
    start, end = to_utc(since, "since"), to_utc(until, "until")
    if start and end and start > end:
        raise MemoryValidationError("since is later than until")
    if project is not None and (not isinstance(project, str) or not 0 < len(project) <= 4096):
        raise MemoryValidationError("project must be a project key or path of 1-4096 characters")
    terms = query_terms(query)
    if not terms:
        raise InvalidQueryError(f"query {query[:60]!r} has no searchable words")
    windows, rest = named_windows(query)
    if not windows:
        # Its own cues ("yesterday", "last week") count from today; in a
        # question naming a date they count from that date, which it names.
        windows, rest = question_windows(rest, utcnow())
    months, rest = named_months(rest)
    undated = query_terms(rest) if windows or months else []
    return Request(
        user_id=user_id,  # type: ignore[arg-type]
        query=query,
        limit=limit,
        session_id=session_id,  # type: ignore[arg-type]
        scope=scopes,
        since=start,
        until=end,
        # Cwds are stored with U+FFFD for what was not UTF-8: compare the same.
        project=(
            without_surrogates(project.rstrip("/") or "/") if isinstance(project, str) else None
        ),
        terms=tuple(terms),
        windows=tuple(windows),
        months=tuple(months),
        undated_terms=tuple(undated),
    )


def _check_scope(scope: object) -> frozenset[str]:
    names: Sequence[object]
    if isinstance(scope, str):
        names = ALL if scope in ("all", AUTO) else scope.split(",")
    elif isinstance(scope, (list, tuple, set, frozenset)) and scope:
        names = list(scope)
    else:
        raise MemoryValidationError(
            f"scope must be 'auto', 'all', one of {', '.join(SCOPES)}, or a list of them"
        )
    chosen = set()
    for name in names:
        name = name.strip() if isinstance(name, str) else name
        if name == "all":
            chosen.update(ALL)
        elif name in SCOPES:
            chosen.add(name)
        else:
            raise MemoryValidationError(
                f"unknown scope {name!r}: use 'auto', 'all', {', '.join(SCOPES)} or a list of them"
            )
    return frozenset(chosen)
