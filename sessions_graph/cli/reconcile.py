"""``sessions-graph reconcile | entities | forget | demo``.

Exit codes of ``reconcile``: 0 when every session was reconciled (or none was
waiting), 1 when one failed (or was held by another run), 2 when the LLM
extractor was asked for and no LLM is configured; the message then says what
to set. With no LLM and no ``--extractor``, the local extractor runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.cli.common import (
    Exit,
    db_option,
    echo,
    emit_json,
    fail,
    open_graph,
    owned_session,
)
from sessions_graph.cli.params import Option
from sessions_graph.errors import ReconciliationNotConfiguredError
from sessions_graph.validation import (
    MAX_CONCURRENCY,
    MAX_LEASE_SECONDS,
    MAX_LIMIT,
    MIN_LEASE_SECONDS,
)

if TYPE_CHECKING:
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.reconcile.summary import ReconciliationSummary

_JSON = Option(False, "--json", help="Machine-readable output.")
_OK = {"reconciled", "pending"}  # pending: reconciled, but new content arrived meanwhile


def _run(coro: Any) -> Any:
    # asyncio costs ~20 ms to import: only commands that reconcile load it.
    import asyncio

    return asyncio.run(coro)


def _llm_or_exit(graph: SessionsGraph) -> Any:
    """The configured model function, or exit 2 saying what to set."""
    from sessions_graph.reconcile import llm

    try:
        return llm.resolve(graph.settings)
    except ReconciliationNotConfiguredError as exc:
        raise fail(str(exc), 2) from None


def _uses_llm(graph: SessionsGraph, extractor: str | None) -> bool:
    """Whether this run extracts with the LLM (the option, else the setting);
    when ``auto`` falls back to the local extractor although an LLM is
    configured, one line on stderr says why."""
    from sessions_graph.errors import ConfigError
    from sessions_graph.reconcile import llm, pipeline

    try:
        choice = pipeline.choose_extractor(graph.settings, pipeline.RunOptions(extractor=extractor))
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    if choice == "local" and (extractor or graph.settings.extractor) == "auto":
        note = llm.fallback_note(graph.settings)
        if note:
            echo(note, err=True)
    return choice == "llm"


def _check_idle_run(graph: SessionsGraph, extractor: str | None, workspace: str | None) -> None:
    """A sweep that finds nothing waiting chooses no extractor, so nothing of
    the pipeline loads (its import is most of such a run's time, and cron
    runs it every few minutes). Its options are still checked as a run
    checks them, and an LLM asked for by name must be configured: a cron
    line that could never reconcile fails now, not when work arrives."""
    from sessions_graph.errors import ConfigError
    from sessions_graph.validation import check_extractor, check_workspace

    if workspace is not None:
        check_workspace(workspace)
    try:
        choice = check_extractor(extractor or graph.settings.extractor or "auto")
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    if choice == "llm":
        _llm_or_exit(graph)


def _line(s: ReconciliationSummary) -> str:
    text = (
        f"{s.session_id}  {s.status}  extractor={s.extractor}"
        f" chunks={s.texts_considered} extracted={s.chunks_extracted}"
        f" deduped={s.texts_deduped} llm_calls={s.llm_calls} entities={s.entities_linked}"
        f" {s.duration_s:.1f}s"
    )
    return f"{text}  error: {s.error}" if s.error else text


def _replay_spool(graph: SessionsGraph) -> None:
    """Apply hook payloads that were spooled while the store was down, so the
    sweep sees every action."""
    from sessions_graph.hooks.replay import replay_spool

    replay_spool(graph, graph.settings)


def _totals(summaries: list[ReconciliationSummary]) -> dict[str, int]:
    """What a sweep did across all users, in counts only."""
    totals = {"sessions": len(summaries)}
    for status in ("reconciled", "pending", "failed", "busy", "lost"):
        totals[status] = sum(s.status == status for s in summaries)
    for cost in ("chunks_extracted", "llm_calls", "chars_sent"):
        totals[cost] = sum(getattr(s, cost) for s in summaries)
    return totals


def _sweep(
    graph: SessionsGraph,
    llm_func: Any,
    as_json: bool,
    own: Callable[[ReconciliationSummary], bool],
    **options: Any,
) -> list[ReconciliationSummary]:
    """Run the sweep with a progress bar on a terminal, lines otherwise; a
    line only for a session ``own`` accepts."""
    if as_json or not sys.stdout.isatty():
        report: Callable[[ReconciliationSummary], None] | None = (
            None if as_json else lambda s: echo(_line(s)) if own(s) else None
        )
        return _run(graph.reconcile_pending(llm_model_func=llm_func, on_result=report, **options))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ) as progress:
        task = progress.add_task("reconciling", total=None)

        def claimed(ids: list[str]) -> None:
            progress.update(task, total=len(ids))

        def done(s: ReconciliationSummary) -> None:
            if own(s):
                progress.console.print(_line(s))
            progress.advance(task)

        return _run(
            graph.reconcile_pending(
                llm_model_func=llm_func, on_claimed=claimed, on_result=done, **options
            )
        )


def reconcile(
    session: str = Option(None, "--session", "-s", help="Reconcile this session now."),
    pending: bool = Option(False, "--pending", help="Sweep waiting sessions, oldest first."),
    limit: int = Option(
        50, "--limit", "-n", min=1, max=MAX_LIMIT, help="At most this many sessions a sweep."
    ),
    retry_failed: bool = Option(False, "--retry-failed", help="Sweep failed ones too."),
    concurrency: int = Option(
        None,
        "--concurrency",
        "-c",
        min=1,
        max=MAX_CONCURRENCY,
        help="LLM calls at once (default: llm_concurrency).",
    ),
    workspace: str = Option(
        None, "--workspace", help="Entity workspace (default: entity_workspace)."
    ),
    lease: float = Option(
        300.0,
        "--lease",
        min=MIN_LEASE_SECONDS,
        max=MAX_LEASE_SECONDS,
        help="Claim lease in seconds; a killed run's sessions wait this long.",
    ),
    extractor: str = Option(
        None,
        "--extractor",
        help="llm (LightRAG) or local (no LLM) for this run (default: the extractor setting).",
    ),
    as_json: bool = _JSON,
) -> None:
    """Extract entities from sessions' text, with LightRAG or locally (out of band)."""
    if bool(session) == pending:
        raise fail("give either --session ID or --pending", 2)
    options = {
        "concurrency": concurrency,
        "lease_seconds": lease,
        "entity_workspace": workspace,
        "extractor": extractor,
    }
    with open_graph() as graph:
        # Spooled hook events first, whatever happens next: a run that cannot
        # reconcile (no LLM) still leaves every captured event in the store.
        _replay_spool(graph)
        # The sweep also ends the interactions whose time is up (their
        # weights stay), whether or not there is anything to reconcile.
        expired = graph.expire_interactions() if pending else 0
        if expired and not as_json:
            echo(f"expired interactions: {expired}")
        if session:
            owned_session(graph, session, graph.settings.user_id)
        idle = pending and not graph.pending_sessions(1, include_failed=retry_failed, plain=True)
        if idle:
            _check_idle_run(graph, extractor, workspace)
            llm_func = None
        else:
            llm_func = _llm_or_exit(graph) if _uses_llm(graph, extractor) else None
        if session:
            summary = _run(graph.reconcile_session(session, llm_model_func=llm_func, **options))
            summaries = [summary]
            if as_json:
                emit_json(summary.model_dump())
            else:
                echo(_line(summary))
        else:
            # The sweep works through every user's queue; what it shows of a
            # session is the acting user's own, and of the others totals only.
            user_id = graph.settings.user_id

            def own(s: ReconciliationSummary) -> bool:
                return graph.session_owner(s.session_id) == user_id

            summaries = (
                []
                if idle
                else _sweep(
                    graph, llm_func, as_json, own, limit=limit, retry_failed=retry_failed, **options
                )
            )
            totals = _totals(summaries)
            if as_json:
                mine = [s.model_dump() for s in summaries if own(s)]
                emit_json(
                    {
                        "user_id": user_id,
                        "sessions": mine,
                        "totals": totals,
                        "expired_interactions": expired,
                    }
                )
            elif not summaries:
                echo("nothing to reconcile")
            else:
                echo(
                    f"all users: {totals['sessions']} sessions swept, {totals['reconciled']}"
                    f" reconciled, {totals['failed']} failed, llm_calls={totals['llm_calls']}"
                    f" chunks_extracted={totals['chunks_extracted']}"
                )
    if any(s.status not in _OK for s in summaries):
        raise Exit(1)


def entities(
    session: str = Option(..., "--session", "-s", help="The session."),
    user: str = Option(None, "--user", "-u", help="Its owner (default: the configured one)."),
    as_json: bool = _JSON,
) -> None:
    """Entities a session mentions, described from its own text only."""
    with open_graph(read_only=True) as graph:
        if graph is None:
            raise fail(f"session {session} not found")
        owned_session(graph, session, user or graph.settings.user_id)
        found = graph.session_entities(session, plain=True)
    if as_json:
        emit_json(found)
        return
    for e in found:
        description = " ".join((e["description"] or "").split())
        echo(f"{e['name']}  ({e['entity_type'] or '?'}, {e['mentions']}x)  {description}")


def forget(
    session: str = Option(
        None, "--session", "-s", help="Delete this session (of the configured user)."
    ),
    user: str = Option(None, "--user", "-u", help="Delete this user and all they own."),
    as_json: bool = _JSON,
) -> None:
    """Delete a session or a user, and every chunk and entity only they produced."""
    if bool(session) == bool(user):
        raise fail("give either --session ID or --user ID", 2)
    with open_graph() as graph:
        if session:
            owned_session(graph, session, graph.settings.user_id)
            counts = graph.forget_session(session)
        else:
            counts = graph.forget_user(user)
    if as_json:
        emit_json(counts)
    else:
        echo("deleted: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


def _demo_data() -> dict[str, Any]:
    text = resources.files("sessions_graph").joinpath("demo_session.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def demo(
    db: str = Option(
        None, "--db", help="Database file to keep (default: a temporary one).", metavar="PATH"
    ),
) -> None:
    """Record a bundled agent session, reconcile it (offline unless an LLM is set), show it."""
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.reconcile import llm
    from sessions_graph.settings import load_settings

    data = _demo_data()
    import tempfile

    db = db or db_option()  # `sessions-graph --db PATH demo` keeps it too
    with tempfile.TemporaryDirectory(prefix="sessions-graph-demo-") as tmp:
        path = Path(db).expanduser() if db else Path(tmp) / "demo.db"
        settings = load_settings(engine="embedded", db=str(path))
        with SessionsGraph(settings=settings) as graph:
            graph.setup()
            _record_demo(graph, data)
            # A temporary file is gone when the demo ends: its path would
            # only send the reader looking for it.
            where = str(path) if db else "a temporary database (keep one with --db PATH)"
            echo(f"recorded session {data['session_id']} in {where}")
            note = llm.fallback_note(graph.settings)
            try:
                llm_func = None if note else llm.resolve(graph.settings)
            except ReconciliationNotConfiguredError:
                llm_func = None  # the local extractor: no key, no network
                echo("no LLM configured: reconciling with the local extractor")
            if note:  # a key set, the reconcile extra not installed
                echo(note, err=True)
            summary = graph.reconcile_session_sync(data["session_id"], llm_model_func=llm_func)
            echo(_line(summary))
            found = graph.session_entities(data["session_id"])
            for e in found:
                echo(f"  entity: {e.name} ({e.entity_type}, {e.mentions}x)")
            if found:
                files = [e for e in found if e.entity_type == "file"] or found
                name = max(files, key=lambda e: e.mentions).name
                mentioning = graph.entity_sessions(name, user_id=data["user_id"])
                echo(
                    f"sessions mentioning {name!r}: " + ", ".join(s.session_id for s in mentioning)
                )
            from sessions_graph.redact import redact

            query = data["search"]
            echo(f"memory search {query!r}:")
            for m in graph.search_memories(data["user_id"], query):
                echo(f"  {redact(m.content)}  # stored as written")


def _record_demo(graph: SessionsGraph, data: dict[str, Any]) -> None:
    session_id, user_id = data["session_id"], data["user_id"]
    graph.record_session_start(
        session_id, user_id=user_id, cwd=data.get("cwd"), project_key=data.get("project_key")
    )
    graph.record_actions(session_id, data["actions"], user_id=user_id)
    for content in data["memories"]:
        graph.save_memory(user_id, content, session_id=session_id)
    graph.record_session_end(session_id)
