"""The web viewer: ``sessions-graph ui`` (extra ``[ui]``: Starlette, Jinja2).

One user's memory, read through the façade, served on 127.0.0.1 only. The
browser is the attack surface: a page of another site could send requests to
the viewer (cross-site request forgery) or, by rebinding its own name to
127.0.0.1, read its answers. So every request must carry the random token the
command printed (in the query string, also for forms: no cookie, which any
other local port's page would share), must name 127.0.0.1 or localhost as
its Host, and a form post from another origin is refused. Pages run no
script and may not be framed; links leave no referrer, so the token stays
on the page.

Handlers are ``async`` and call the façade directly: requests are served one
at a time on the event loop's thread, which is what an engine expects (one
thread at a time), and a viewer has one user.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sessions_graph.errors import SessionsGraphError
from sessions_graph.redact import redact
from sessions_graph.ui import views

if TYPE_CHECKING:
    from collections.abc import Callable

    from sessions_graph.graph import SessionsGraph
    from sessions_graph.settings import Settings

#: Host names a request may give: a rebound foreign name is refused.
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost"})
#: Sessions on the Sessions page.
SESSIONS_SHOWN = 100
#: Memories on the Memories page.
MEMORIES_SHOWN = 200

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:;"
        " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


class Guard:
    """Refuses a request with a foreign Host, without the token, or (a form
    post) from another origin, before any handler reads the store."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        reason = self._refusal(request)
        if reason:
            response = PlainTextResponse(reason, status_code=403, headers=_HEADERS)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, request: Request) -> str | None:
        host = urlsplit("//" + request.headers.get("host", "")).hostname
        if host not in ALLOWED_HOSTS:
            return "forbidden: this viewer answers only to 127.0.0.1 or localhost\n"
        given = request.query_params.get("token", "").encode()
        if not hmac.compare_digest(given, self.token):
            return "forbidden: open the URL that `sessions-graph ui` printed (it has the token)\n"
        if request.method not in ("GET", "HEAD"):
            origin = request.headers.get("origin")
            if origin is not None and urlsplit(origin).hostname not in ALLOWED_HOSTS:
                return "forbidden: a form of another site\n"
        return None


def create_app(
    settings: Settings,
    user_id: str,
    token: str,
    *,
    open_graph: Callable[[], SessionsGraph] | None = None,
) -> ASGIApp:
    """The viewer for ``user_id`` on the store ``settings`` name; every
    request needs ``token``. ``open_graph`` replaces how the store is opened
    (tests pass a graph on an engine of their choice)."""
    templates = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=select_autoescape(default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def url(path: str, **params: Any) -> str:
        query = {k: v for k, v in params.items() if v not in (None, "")}
        return f"{path}?{urlencode({**query, 'token': token})}"

    templates.globals.update(url=url, user_id=user_id, token=token, step_line=views.step_line)
    # Memories are stored as written: shown redacted, as every read path
    # shows stored text (the edit box alone holds the text as stored, since
    # saving it writes it back).
    templates.filters["redacted"] = redact
    state: dict[str, Any] = {}

    def graph() -> SessionsGraph:
        if "graph" not in state:
            if open_graph is not None:
                state["graph"] = open_graph()
            else:
                from sessions_graph.graph import SessionsGraph

                state["graph"] = SessionsGraph(settings=settings)
        return state["graph"]  # type: ignore[no-any-return]

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = templates.get_template(name).render(page=name.removesuffix(".html"), **context)
        return HTMLResponse(html, status_code=status, headers=_HEADERS)

    async def sessions_page(request: Request) -> Response:
        q = request.query_params
        since_text = q.get("since") or None
        filters = {
            "project": q.get("project") or None,
            "client": q.get("client") or None,
            "text": q.get("q") or None,
            "entity": q.get("entity") or None,
        }
        rows = views.session_rows(
            graph(), user_id, since=views.parse_since(since_text), limit=SESSIONS_SHOWN, **filters
        )
        projects: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            projects.setdefault(row["project"] or "(no project)", []).append(row)
        return page(
            "sessions.html", projects=projects, count=len(rows), since=since_text, **filters
        )

    async def session_page(request: Request) -> Response:
        offset = _int(request.query_params.get("offset"), 0)
        detail = views.session_detail(
            graph(), user_id, request.path_params["session_id"], offset=offset
        )
        return page("session.html", d=detail, s=detail["session"])

    async def memories_page(request: Request) -> Response:
        query = request.query_params.get("q") or ""
        g = graph()
        if query:
            memories = g.search_memories(user_id, query, limit=MEMORIES_SHOWN)
        else:
            memories = g.get_memories(user_id, limit=MEMORIES_SHOWN)
        editing = request.query_params.get("edit")
        return page("memories.html", memories=memories, q=query, editing=editing)

    async def memory_edit(request: Request) -> Response:
        form = await request.form()
        content = form.get("content")
        memory_id = request.path_params["memory_id"]
        if not isinstance(content, str):
            raise SessionsGraphError("no content given")
        if graph().update_memory(memory_id, content, user_id=user_id) is None:
            raise views.NotFound(f"memory {memory_id} not found")
        return RedirectResponse(url("/memories"), status_code=303, headers=_HEADERS)

    async def memory_delete(request: Request) -> Response:
        memory_id = request.path_params["memory_id"]
        if not graph().delete_memory(memory_id, user_id=user_id):
            raise views.NotFound(f"memory {memory_id} not found")
        return RedirectResponse(url("/memories"), status_code=303, headers=_HEADERS)

    async def entities_page(request: Request) -> Response:
        drawing = views.entity_graph(graph(), user_id)
        by_name = {n["name"]: n for n in drawing["nodes"]}
        return page("entities.html", g=drawing, by_name=by_name)

    async def recall_page(request: Request) -> Response:
        query = request.query_params.get("q") or ""
        result = graph().recall(user_id, query, limit=20) if query.strip() else None
        return page("recall.html", q=query, result=result)

    async def injections_page(request: Request) -> Response:
        rows = views.injections_of(graph(), user_id)
        ledger = hasattr(graph(), "injections")
        return page(
            "injections.html", rows=rows[:500], totals=views.injection_totals(rows), ledger=ledger
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        return page("error.html", status=404, message=str(exc))

    async def refused(request: Request, exc: Exception) -> Response:
        return page("error.html", status=400, message=" ".join(str(exc).split()))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if "graph" in state:
                state.pop("graph").close()

    app = Starlette(
        routes=[
            Route("/", sessions_page),
            Route("/session/{session_id}", session_page),
            Route("/memories", memories_page),
            Route("/memories/{memory_id}/edit", memory_edit, methods=["POST"]),
            Route("/memories/{memory_id}/delete", memory_delete, methods=["POST"]),
            Route("/entities", entities_page),
            Route("/recall", recall_page),
            Route("/injections", injections_page),
        ],
        exception_handlers={views.NotFound: not_found, SessionsGraphError: refused},
        lifespan=lifespan,
    )
    return Guard(app, token)


def _int(text: str | None, default: int) -> int:
    try:
        return max(0, int(text)) if text else default
    except ValueError:
        return default
