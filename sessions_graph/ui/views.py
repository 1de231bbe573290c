"""What the sessions commands and the viewer show, built from the façade.

Plain dicts and lists, no web library: ``sessions-graph sessions`` and ``show``
print them, the viewer renders them. Everything is read through
``SessionsGraph`` for one user; a session of another user is "not found".

Two things come from work that may not be in the façade yet: a Session's
digest (``session_digest``) and the injection ledger (``injections``). When
the façade has them they are shown; without them the goal is the Session's
first request and the ledger reads as empty.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections import Counter
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.clock import parse_timestamp
from sessions_graph.errors import MemoryValidationError
from sessions_graph.extras import pip_install

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Characters of a goal shown in a list.
GOAL_CHARS = 160
#: Characters of a folded tool call's line.
TOOL_LINE_CHARS = 120
#: Actions shown on one page of a session.
ACTIONS_PAGE = 200
#: How many of the user's newest sessions the entity graph reads.
GRAPH_SESSIONS = 150
#: Most entities drawn in the graph (the most mentioned).
GRAPH_ENTITIES = 40


class NotFound(MemoryValidationError):
    """A session that does not exist, or is another user's: said the same way."""


# -- small helpers ---------------------------------------------------------------
def one_line(text: str | None, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _plain(value: Any) -> Any:
    """A model (pydantic) or mapping as a plain dict; anything else unchanged."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, Mapping):
        return dict(value)
    return value


def parse_since(text: str | None) -> str | None:
    """A ``--since`` value in the store's timestamp format: an ISO date or
    time, or a number of days back (``7d``); None for none."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    if text[:-1].isdigit() and text[-1:] == "d":
        moment = datetime.now(timezone.utc) - timedelta(days=int(text[:-1]))
        return parse_timestamp(moment)
    stamp = parse_timestamp(text)
    if stamp is None:
        raise MemoryValidationError(
            f"since must be a date (2026-01-31), a time in ISO 8601, or days back (7d);"
            f" got {text[:40]!r}"
        )
    return stamp


# -- digests and injections (façade methods that may not exist yet) ---------------
def digest_of(graph: SessionsGraph, session_id: str) -> dict[str, Any] | None:
    """The session's digest (goal, done, decisions, open) as a dict, or None
    when there is none (or the façade does not make digests)."""
    method = getattr(graph, "session_digest", None)
    if method is None:
        return None
    digest = _plain(method(session_id))
    return digest if isinstance(digest, dict) and digest else None


def injections_of(
    graph: SessionsGraph, user_id: str, session_id: str | None = None
) -> list[dict[str, Any]]:
    """The injection ledger's rows of the user (of one session), as dicts with
    ``at``, ``session_id``, ``event``, ``items``, ``tokens`` and ``used``
    (what the prompt's answer used of the items, as ``used_text`` says it);
    empty when nothing is recorded (or the façade keeps no ledger)."""
    method = getattr(graph, "injections", None)
    if method is None:
        return []
    rows = []
    for raw in method(user_id, session_id=session_id) or []:
        row = _plain(raw)
        if not isinstance(row, dict):
            continue
        items = _first(row, "item_ids", "items") or []
        rows.append(
            {
                "at": _first(row, "injected_at", "at", "time", "timestamp", "created_at"),
                "session_id": row.get("session_id"),
                "event": row.get("event"),
                "items": list(items) if isinstance(items, (list, tuple)) else [items],
                "tokens": int(_first(row, "tokens", "estimated_tokens", "token_estimate") or 0),
                "used": used_text(row.get("used"), row.get("used_share")),
            }
        )
    return rows


def used_text(used: int | None, share: float | None) -> str:
    """What an answer used of the items injected with its prompt: "1 (50%)",
    or "-" when nothing answered them (not yet, or no prompt asked)."""
    if used is None or share is None:
        return "-"
    return f"{used} ({share:.0%})"


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if row.get(key) is not None:
            return row[key]
    return None


def injection_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens injected per day (newest first) and per session (most first)."""
    per_day: Counter[str] = Counter()
    per_session: Counter[str] = Counter()
    count_day: Counter[str] = Counter()
    for row in rows:
        day = str(row.get("at") or "")[:10] or "?"
        per_day[day] += row["tokens"]
        count_day[day] += 1
        per_session[row.get("session_id") or "?"] += row["tokens"]
    return {
        "days": [
            {"day": d, "tokens": per_day[d], "injections": count_day[d]}
            for d in sorted(per_day, reverse=True)
        ],
        "sessions": [{"session_id": s, "tokens": t} for s, t in per_session.most_common()],
        "total": sum(per_day.values()),
    }


# -- the sessions list ---------------------------------------------------------------
def session_rows(
    graph: SessionsGraph,
    user_id: str,
    *,
    project: str | None = None,
    since: str | None = None,
    entity: str | None = None,
    client: str | None = None,
    text: str | None = None,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """The user's sessions, newest first: when, project, client, exchanges,
    reconciliation status and goal (the digest's, else the first request).

    ``project`` is a project key or a directory; ``since`` a time as ``parse_since`` gives;
    ``entity`` keeps sessions that mention it; ``client`` (``claude-code``,
    ``codex``) and ``text`` (words of the goal or first request) filter what
    the store returns, reading further back until ``limit`` rows are found.
    """
    if entity:
        found = graph.entity_sessions(entity, user_id=user_id, plain=True)
        base = [
            {**s, "first_user_message": None}
            for s in found
            if (project is None or _of_project(s["project_key"], s["cwd"], project))
            and (since is None or (s["started_at"] or "") >= since)
        ]
        candidates: list[dict[str, Any]] = base
        pages = [candidates]
    else:
        pages = _session_pages(graph, user_id, project, limit)
    rows: list[dict[str, Any]] = []
    needle = text.casefold().split() if text else []
    for page in pages:
        for record in page:
            if since is not None and (record.get("started_at") or "") < since:
                return rows  # newest first: everything after is older
            # The cheap filters first: a text search may read far back.
            goal, goal_from = _goal(graph, record)
            runtime = graph.session_client(record["session_id"])
            if client and runtime != client:
                continue
            haystack = f"{goal} {record.get('project_key') or ''} {record['session_id']}"
            if needle and not all(word in haystack.casefold() for word in needle):
                continue
            rows.append(_overview(graph, record, goal, goal_from, runtime))
            if len(rows) >= limit:
                return rows
    return rows


def _of_project(key: str | None, cwd: str | None, project: str) -> bool:
    """A session of ``project``: a project key, or a directory its working
    directory is in (the rule ``recent_sessions`` applies in the engines)."""
    if key == project:
        return True
    root = project.rstrip("/") or "/"
    return bool(cwd) and (cwd == root or cwd.startswith(root.rstrip("/") + "/"))


def _session_pages(graph: SessionsGraph, user_id: str, project: str | None, limit: int) -> Any:
    """The user's sessions a page at a time, newest first (pages of at least
    ``limit``), so that filters applied here can read further back."""
    size = max(limit, 50)
    before = None
    while True:
        page = graph.recent_sessions(
            user_id, project_key=project, limit=size, before=before, preview_chars=GOAL_CHARS * 2
        )
        yield page
        if len(page) < size:
            return
        before = page[-1]["started_at"]
        if not before:
            return


def _goal(graph: SessionsGraph, record: dict[str, Any]) -> tuple[str, str]:
    """The session's goal and where it comes from: its digest's, else its
    first request."""
    session_id = record["session_id"]
    digest = digest_of(graph, session_id)
    if digest and digest.get("goal"):
        return one_line(str(digest["goal"]), GOAL_CHARS), "digest"
    first = record.get("first_user_message")
    if first is None:
        first = next(
            (
                a["text"]
                for a in graph.session_actions(session_id, 0, 50, plain=True)
                if a["action_type"] == "user_message"
            ),
            None,
        )
    return one_line(first, GOAL_CHARS), "first request"


def _overview(
    graph: SessionsGraph, record: dict[str, Any], goal: str, goal_from: str, client: str | None
) -> dict[str, Any]:
    session_id = record["session_id"]
    session = graph.get_session(session_id, plain=True)
    return {
        "session_id": session_id,
        "started_at": record.get("started_at"),
        "ended_at": record.get("ended_at"),
        "project": record.get("project_key"),
        "cwd": record.get("cwd"),
        "client": client,
        "exchanges": graph.session_exchanges(session_id),
        "actions": record.get("action_count") or 0,
        "status": session["reconciliation_status"] if session else None,
        "goal": goal,
        "goal_from": goal_from,
    }


# -- one session ---------------------------------------------------------------------
def owned(graph: SessionsGraph, session_id: str, user_id: str) -> dict[str, Any]:
    """The session (a plain record) if it is the user's; ``NotFound``
    otherwise (the same words either way: nobody learns whose a session is)."""
    session = graph.get_session(session_id, plain=True)
    if session is None or session["user_id"] != user_id:
        raise NotFound(f"session {session_id} not found for user {user_id}")
    return session


def session_detail(
    graph: SessionsGraph,
    user_id: str,
    session_id: str,
    *,
    offset: int = 0,
    limit: int = ACTIONS_PAGE,
) -> dict[str, Any]:
    """One session: its fields, digest, exchanges (a page of actions, tool
    calls folded to one line each), entities, memories and injections."""
    session = owned(graph, session_id, user_id)
    actions = graph.session_actions(session_id, offset, limit, plain=True)
    digest = digest_of(graph, session_id)
    exchanges = fold_exchanges(actions)
    first_request = next(
        (step["text"] for ex in exchanges for step in ex["steps"] if step["kind"] == "request"),
        None,
    )
    following = offset + len(actions)
    return {
        "session": session,
        "client": graph.session_client(session_id),
        "digest": digest,
        "goal": one_line((digest or {}).get("goal") or first_request or "", GOAL_CHARS),
        "exchanges": exchanges,
        "offset": offset,
        "next_offset": following if following < session["action_count"] else None,
        "previous_offset": max(0, offset - limit) if offset else None,
        "entities": graph.session_entities(session_id, plain=True),
        "memories": graph.get_memories_for_session(session_id, plain=True),
        "injections": injections_of(graph, user_id, session_id),
    }


def fold_exchanges(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Actions (plain records) grouped into exchanges (a request and what
    followed it), each tool call folded with its result to one line."""
    exchanges: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for action in actions:
        kind = action["action_type"]
        if kind == "user_message" or current is None:
            current = {"steps": [], "at": action["timestamp"]}
            exchanges.append(current)
        if kind == "user_message":
            current["steps"].append(
                {"kind": "request", "text": action["text"], "seq": action["seq"]}
            )
        elif kind == "assistant_message":
            current["steps"].append(
                {"kind": "answer", "text": action["text"], "seq": action["seq"]}
            )
        elif kind == "tool_call":
            step = {
                "kind": "tool",
                "tool": action["tool_name"] or "tool",
                "line": one_line(action["text"], TOOL_LINE_CHARS),
                "result": None,
                "is_error": False,
                "seq": action["seq"],
            }
            if action["tool_use_id"]:
                calls[action["tool_use_id"]] = step
            current["steps"].append(step)
        elif kind == "tool_result":
            result = _result_line(action)
            call = calls.pop(action["tool_use_id"], None) if action["tool_use_id"] else None
            if call is not None:
                call["result"], call["is_error"] = result, action["is_error"]
            else:
                current["steps"].append(
                    {
                        "kind": "tool",
                        "tool": action["tool_name"] or "result",
                        "line": "",
                        "result": result,
                        "is_error": action["is_error"],
                        "seq": action["seq"],
                    }
                )
        else:
            current["steps"].append(
                {"kind": "system", "text": one_line(action["text"], 300), "seq": action["seq"]}
            )
    return exchanges


def _result_line(action: dict[str, Any]) -> str:
    text = action["text"] or ""
    if action["is_error"]:
        return "error: " + one_line(text, 80)
    lines = text.count("\n") + 1 if text.strip() else 0
    return f"{lines} line{'s' if lines != 1 else ''}"


def show_lines(detail: dict[str, Any]) -> list[str]:
    """``sessions-graph show`` as text lines."""
    s = detail["session"]
    out = [
        f"session {s['session_id']}  {(s.get('started_at') or '')[:16]}"
        f"  {s.get('project_key') or '-'}  {detail['client'] or '?'}"
        f"  {s.get('reconciliation_status') or '-'}",
    ]
    if s.get("cwd"):
        out.append(f"cwd: {s['cwd']}")
    digest = detail["digest"]
    if digest:
        out.append("digest:")
        for key in ("goal", "done", "decisions", "open"):
            value = digest.get(key)
            if not value:
                continue
            values = value if isinstance(value, list) else [value]
            out.append(f"  {key}: " + "; ".join(one_line(str(v), 200) for v in values))
    else:
        out.append(f"goal (first request): {detail['goal'] or '-'}")
    out.append("")
    if not detail["exchanges"]:
        out.append("no actions recorded")
    for number, exchange in enumerate(detail["exchanges"], 1):
        out.append(f"[{number}] {(exchange.get('at') or '')[:16]}")
        for step in exchange["steps"]:
            out.append("  " + step_line(step))
    if detail["next_offset"] is not None:
        out.append(f"(more: --offset {detail['next_offset']})")
    out.append("")
    entities = detail["entities"]
    if entities:
        out.append("entities: " + ", ".join(f"{e['name']} ({e['mentions']}x)" for e in entities))
    elif s.get("reconciliation_status") == "reconciled":
        out.append("entities: none")
    else:
        out.append("entities: none yet (not reconciled)")
    if detail["memories"]:
        from sessions_graph.redact import redact  # memories are stored as written

        for m in detail["memories"]:
            out.append(f"memory: {one_line(redact(m['content']), 200)}")
    injections = detail["injections"]
    if injections:
        out.append(
            f"injected: {len(injections)} times, {sum(i['tokens'] for i in injections)} tokens"
        )
        for i in injections:
            out.append(
                f"  {str(i['at'] or '')[:19]}  {i['event'] or '-'}  {i['tokens']} tokens"
                f"  {len(i['items'])} items  answer used {i['used']}"
            )
    else:
        out.append("injected: nothing recorded")
    return out


def step_line(step: dict[str, Any]) -> str:
    """One step of an exchange on one line."""
    if step["kind"] == "request":
        return "> " + one_line(step["text"], 400)
    if step["kind"] == "answer":
        return "< " + one_line(step["text"], 400)
    if step["kind"] == "tool":
        result = f"  -> {step['result']}" if step["result"] else ""
        return f"* {step['tool']}  {step['line']}{result}".rstrip()
    return "# " + step["text"]


# -- entities and their co-mentions ------------------------------------------------------
def entity_graph(
    graph: SessionsGraph,
    user_id: str,
    *,
    sessions: int = GRAPH_SESSIONS,
    most: int = GRAPH_ENTITIES,
) -> dict[str, Any]:
    """The entities of the user's newest ``sessions`` sessions, the ``most``
    mentioned, with an edge between two that the same session mentions
    (weight: how many sessions), laid out for an SVG drawing."""
    recent = graph.recent_sessions(user_id, limit=sessions, preview_chars=1)
    mentions: Counter[str] = Counter()
    session_count: Counter[str] = Counter()
    types: dict[str, str | None] = {}
    rows_of: dict[str, list[dict[str, Any]]] = {row["session_id"]: [] for row in recent}
    # One read for all of them (a read per session took seconds at 150).
    for row in graph.user_entity_mentions(user_id, list(rows_of)):
        rows_of[row["session_id"]].append(row)
    per_session: list[set[str]] = []
    for rows in rows_of.values():  # newest session first: its type wins
        for row in rows:
            mentions[row["name"]] += row["mentions"]
            session_count[row["name"]] += 1
            types.setdefault(row["name"], row["entity_type"])
        per_session.append({row["name"] for row in rows})
    read = len(per_session)
    kept = [name for name, _ in mentions.most_common(most)]
    keep = set(kept)
    pairs: Counter[tuple[str, str]] = Counter()
    for names in per_session:
        inside = sorted(names & keep)
        for i, a in enumerate(inside):
            for b in inside[i + 1 :]:
                pairs[(a, b)] += 1
    drawn = pairs.most_common(120)  # the strongest: a denser drawing reads as a blot
    positions = layout(kept, [pair for pair, _ in drawn])
    nodes = [
        {
            "name": n,
            "type": types.get(n),
            "mentions": mentions[n],
            "sessions": session_count[n],
            "x": positions[n][0],
            "y": positions[n][1],
            "r": 5 + 3 * math.log1p(mentions[n]),
        }
        for n in kept
    ]
    edges = [{"a": a, "b": b, "weight": w} for (a, b), w in drawn]
    return {"nodes": nodes, "edges": edges, "sessions_read": read}


def layout(
    names: list[str], edges: list[tuple[str, str]], *, size: float = 600.0, rounds: int = 40
) -> dict[str, tuple[float, float]]:
    """A small force-directed layout (Fruchterman-Reingold) in a ``size``
    square: connected names pull together, all push apart. Deterministic
    (the start is a circle), so a page draws the same twice."""
    count = len(names)
    if count == 0:
        return {}
    centre = size / 2
    pos = {
        n: [
            centre + centre * 0.8 * math.cos(2 * math.pi * i / count),
            centre + centre * 0.8 * math.sin(2 * math.pi * i / count),
        ]
        for i, n in enumerate(names)
    }
    k = 0.8 * math.sqrt(size * size / count)
    heat = size / 10
    for _ in range(rounds):
        shift = {n: [0.0, 0.0] for n in names}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                dx, dy = pos[a][0] - pos[b][0], pos[a][1] - pos[b][1]
                d2 = max(dx * dx + dy * dy, 0.01)
                push = k * k / d2
                shift[a][0] += dx * push
                shift[a][1] += dy * push
                shift[b][0] -= dx * push
                shift[b][1] -= dy * push
        for a, b in edges:
            dx, dy = pos[a][0] - pos[b][0], pos[a][1] - pos[b][1]
            d = max(math.hypot(dx, dy), 0.1)
            pull = d / k
            shift[a][0] -= dx * pull
            shift[a][1] -= dy * pull
            shift[b][0] += dx * pull
            shift[b][1] += dy * pull
        for n in names:
            dx, dy = shift[n]
            d = max(math.hypot(dx, dy), 0.01)
            step = min(d, heat)
            # a weak pull to the centre keeps unconnected names on the page
            pos[n][0] += dx / d * step + (centre - pos[n][0]) * 0.02
            pos[n][1] += dy / d * step + (centre - pos[n][1]) * 0.02
        heat *= 0.93
    margin = 40.0
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span_x, span_y = max(max(xs) - min(xs), 1.0), max(max(ys) - min(ys), 1.0)
    return {
        n: (
            round(margin + (p[0] - min(xs)) / span_x * (size - 2 * margin), 1),
            round(margin + (p[1] - min(ys)) / span_y * (size - 2 * margin), 1),
        )
        for n, p in pos.items()
    }


# -- health (what `status` adds) ------------------------------------------------------------
def health(graph: SessionsGraph | None, settings: Settings, user_id: str) -> dict[str, Any]:
    """Whether capture works for the user, and what to do when it does not:
    which agents have our hooks and MCP server (and where), each agent's last
    hook event and what came of it (``hooks.health``), the last session each
    agent recorded, the spool, sessions waiting or failed, tokens
    injected today, and a list of problems, each one line with its fix."""
    clients = [_client_install(name) for name in ("claude-code", "codex")]
    problems: list[str] = []
    if not any(c["hooks"] for c in clients):
        problems.append(
            "no agent runs our hooks: run `sessions-graph install-hooks`"
            " (or `sessions-graph install-hooks --codex`)"
        )
    for c in clients:
        if c["hooks"] and not c["mcp"]:
            flag = " --codex" if c["client"] == "codex" else ""
            problems.append(
                f"{c['client']} has our hooks but not the MCP server: {pip_install('mcp')},"
                f" then `sessions-graph install-hooks{flag}`"
            )
    spool = _spool_counts(settings)
    if spool["waiting"]:
        problems.append(
            f"{spool['waiting']} hook events wait in the spool ({spool['dir']}):"
            " run `sessions-graph reconcile --pending` to store them"
        )
    if spool["rejected"]:
        problems.append(
            f"{spool['rejected']} hook events were rejected (see {spool['dir']}/rejected and"
            f" {settings.log_path}): fix or delete them"
        )
    from sessions_graph.hooks.health import last_events

    last_hooks = last_events(Path(settings.state_dir))
    for c in clients:
        c["last_hook"] = last_hooks.get(c["client"])
    last_error = _last_log_error(settings.log_path)
    info: dict[str, Any] = {
        "clients": clients,
        "spool": spool,
        "last_hook_error": last_error,
        "last_hook_unknown_client": last_hooks.get("unknown"),
        "pending_sessions": None,
        "failed_sessions": None,
        "tokens_injected_today": None,
        "problems": problems,
    }
    if graph is None:
        return info
    waiting = [
        s
        for s in graph.pending_sessions(10_000, include_failed=True, plain=True)
        if s["user_id"] == user_id
    ]
    failed = [s for s in waiting if s["reconciliation_status"] == "failed"]
    info["pending_sessions"] = len(waiting) - len(failed)
    info["failed_sessions"] = len(failed)
    if failed:
        newest = failed[-1]
        problems.append(
            f"{len(failed)} sessions failed to reconcile (last: {newest['session_id']}:"
            f" {one_line(newest['reconciliation_error'], 80)}): run"
            " `sessions-graph reconcile --pending --retry-failed`"
        )
    today = datetime.now(timezone.utc).date().isoformat()
    if hasattr(graph, "injections"):
        rows = injections_of(graph, user_id)
        info["tokens_injected_today"] = sum(
            r["tokens"] for r in rows if str(r.get("at") or "").startswith(today)
        )
    seen = {}
    for row in graph.recent_sessions(user_id, limit=50, preview_chars=1):
        client = graph.session_client(row["session_id"])
        if client and client not in seen:
            seen[client] = {
                "session_id": row["session_id"],
                "at": row.get("last_assistant_message_at")
                or row.get("first_user_message_at")
                or row.get("started_at"),
            }
    for c in clients:
        c["last_session"] = seen.get(c["client"])
    return info


def _client_install(client: str) -> dict[str, Any]:
    """Where ``client`` has our hooks (events) and MCP server: user scope and
    the current directory's project."""
    from sessions_graph.hooks.install import config_files

    codex = client == "codex"
    hooks: list[dict[str, Any]] = []
    mcp: list[str] = []
    places: list[tuple[str, tuple[Path, Path]]] = [("user", config_files(None, codex))]
    with contextlib.suppress(Exception):  # the current directory is gone: user scope only
        places.append(("project", config_files(Path.cwd(), codex)))
    for scope, (hooks_file, mcp_file) in places:
        events = _our_events(hooks_file)
        if events:
            hooks.append({"scope": scope, "file": str(hooks_file), "events": events})
        if _has_our_server(mcp_file, codex):
            mcp.append(str(mcp_file))
    return {"client": client, "hooks": hooks, "mcp": mcp, "last_session": None}


def _our_events(path: Path) -> list[str]:
    from sessions_graph.hooks.install import is_ours

    data = _read_json(path)
    found = []
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if any(isinstance(h, dict) and is_ours(h.get("command")) for h in inner or []):
                found.append(event)
                break
    return found


def _has_our_server(path: Path, codex: bool) -> bool:
    from sessions_graph.hooks.install import MCP_SERVER_NAME

    if not codex:
        servers = _read_json(path).get("mcpServers") or {}
        return isinstance(servers, dict) and MCP_SERVER_NAME in servers
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        data = tomllib.loads(text)
    except ValueError:
        return False
    return MCP_SERVER_NAME in (data.get("mcp_servers") or {})


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _spool_counts(settings: Settings) -> dict[str, Any]:
    from sessions_graph.hooks.spool import pending_files

    rejected_dir = settings.spool_dir / "rejected"
    try:
        rejected = sum(n.endswith(".json") and n[0] != "." for n in os.listdir(rejected_dir))
    except OSError:
        rejected = 0
    return {
        "dir": str(settings.spool_dir),
        "waiting": len(pending_files(settings)),
        "rejected": rejected,
    }


def _last_log_error(log_path: Path) -> str | None:
    """The hook log's last ERROR line (its end only is read)."""
    try:
        with log_path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16_384))
            tail = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    errors = [line for line in tail if " ERROR " in line]
    return one_line(errors[-1], 300) if errors else None
