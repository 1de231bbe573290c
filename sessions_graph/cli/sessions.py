"""``sessions-graph sessions | show | ui``: reading the user's sessions back.

``sessions`` lists them (newest first, filtered), ``show`` prints one, ``ui``
serves the web viewer (extra ``[ui]``; Starlette and Jinja2 load only then).
"""

from __future__ import annotations

from typing import Any

from sessions_graph.cli.common import (
    cli_settings,
    echo,
    emit_json,
    fail,
    open_graph,
    project_arg,
    say_nothing_stored,
)
from sessions_graph.cli.params import Argument, Option
from sessions_graph.validation import MAX_LIMIT

_USER = Option(None, "--user", "-u", help="User id (default: the configured user_id).")
_JSON = Option(False, "--json", help="Machine-readable output.")
#: The viewer's port unless --port says otherwise: fixed, so a bookmark
#: keeps working, and outside the ranges other local servers favour.
DEFAULT_UI_PORT = 8787


def sessions(
    project: str = Option(
        None, "--project", "-p", help="Only this project: its key, or a directory (. is here)."
    ),
    since: str = Option(
        None, "--since", help="Only sessions started since: a date, an ISO time, or 7d."
    ),
    entity: str = Option(
        None, "--entity", "-e", help="Only sessions that mention this entity (any case)."
    ),
    limit: int = Option(20, "--limit", "-n", min=1, max=MAX_LIMIT),
    user: str = _USER,
    as_json: bool = _JSON,
) -> None:
    """The user's sessions, newest first: date, project, client, exchanges,
    reconciliation status and goal."""
    from sessions_graph.ui import views

    moment = views.parse_since(since)  # a bad date fails even with nothing stored
    with open_graph(read_only=True) as graph:
        if graph is None:
            return say_nothing_stored(as_json, [])
        rows = views.session_rows(
            graph,
            user or graph.settings.user_id,
            project=project_arg(project),
            since=moment,
            entity=entity,
            limit=limit,
        )
    if as_json:
        emit_json(rows)
        return
    if not rows:
        echo(_nothing_found(project, since, entity))
        return
    # The id first, as before filters were added: scripts take the first word.
    for r in rows:
        echo(
            f"{r['session_id']}  {(r['started_at'] or '')[:16].replace('T', ' ')}"
            f"  {r['project'] or '-'}  {r['client'] or '?'}  {r['exchanges']} exchanges"
            f"  {r['status'] or '-'}  {r['goal']}"
        )


def _nothing_found(project: str | None, since: str | None, entity: str | None) -> str:
    """What an empty answer says: which filter found nothing."""
    if entity:
        where = f" of project {project}" if project else ""
        return f"no session{where} mentions {entity}" + (f" since {since}" if since else "")
    if project or since:
        parts = [f"in project {project}" if project else "", f"since {since}" if since else ""]
        return "no session " + " ".join(p for p in parts if p)
    return "no session recorded yet"


def show(
    session_id: str = Argument(..., help="The session's id."),
    offset: int = Option(0, "--offset", min=0, help="First action shown (long sessions)."),
    user: str = _USER,
    as_json: bool = _JSON,
) -> None:
    """One session: its digest, its exchanges (tool calls one line each), the
    entities it mentions and what was injected into it."""
    from sessions_graph.ui import views

    with open_graph(read_only=True) as graph:
        user_id = user or cli_settings().user_id
        if graph is None:
            raise fail(f"session {session_id} not found for user {user_id}")
        try:
            detail = views.session_detail(graph, user_id, session_id, offset=offset)
        except views.NotFound as exc:
            raise fail(str(exc)) from None
    if as_json:
        emit_json(detail)
        return
    for line in views.show_lines(detail):
        echo(line)


def health_lines(info: dict[str, Any]) -> list[str]:
    """``status``'s health part as text lines."""
    lines = []
    for c in info["clients"]:
        hooks = "; ".join(f"{h['scope']} {h['file']}" for h in c["hooks"]) or "not installed"
        mcp = "; ".join(c["mcp"]) or "not registered"
        lines.append(f"{c['client'] + ':':<15} hooks: {hooks}; mcp: {mcp}")
        hook = c.get("last_hook")
        lines.append(f"{'':<15} last hook: " + (_hook_line(hook) if hook else "none yet"))
    spool = info["spool"]
    lines.append(f"{'spool:':<15} {spool['waiting']} waiting, {spool['rejected']} rejected")
    if info.get("last_hook_unknown_client"):
        hook = _hook_line(info["last_hook_unknown_client"])
        lines.append(f"{'unknown client:':<15} last hook: {hook}")
    if info["last_hook_error"]:
        lines.append(f"{'last hook error:':<15} {info['last_hook_error']}")
    if info["pending_sessions"] is not None:
        lines.append(
            f"{'reconciliation:':<15} {info['pending_sessions']} pending,"
            f" {info['failed_sessions']} failed"
        )
    tokens = info["tokens_injected_today"]
    lines.append(
        f"{'injected today:':<15} "
        + (f"{tokens} tokens" if tokens is not None else "not recorded by this version")
    )
    lines += [f"problem: {p}" for p in info["problems"]] or ["no problem found"]
    return lines


def _hook_line(hook: dict[str, Any]) -> str:
    return f"{hook['event']} at {hook['at'].replace('T', ' ').rstrip('Z')} UTC: {hook['outcome']}"


def ui(
    port: int = Option(
        DEFAULT_UI_PORT, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free one)."
    ),
    user: str = _USER,
) -> None:
    """Serve the web viewer on 127.0.0.1 (extra [ui]); prints its URL, with
    the token every request must carry."""
    import socket

    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        from sessions_graph.extras import pip_install

        raise fail(f"the viewer needs its extra: {pip_install('ui')}", 2) from None
    from sessions_graph.ui.app import create_app

    settings = cli_settings()
    user_id = user or settings.user_id
    from sessions_graph.validation import check_id

    check_id(user_id, "user_id")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise fail(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}): pass --port N") from None
    bound = sock.getsockname()[1]
    import secrets  # hmac and OpenSSL's hashes: the server's token only

    token = secrets.token_urlsafe(24)
    app = create_app(settings, user_id, token)
    echo(f"sessions-graph viewer for {user_id}: http://127.0.0.1:{bound}/?token={token}")
    echo("(Ctrl-C stops it)")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
