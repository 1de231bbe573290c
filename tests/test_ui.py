"""The web viewer in a real browser: ``sessions-graph ui`` as a process, its
pages loaded by headless Chromium (Debian's ``chromium``), what they show
asserted on the DOM the browser built, a screenshot of each page kept in
``SESSIONS_GRAPH_SCREENS`` (default /work/screens when it exists).

Writes (edit, delete a memory) are posted with a plain HTTP client, as the
page's forms post them, and read back through the browser.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

from sessions_graph import SessionsGraph
from sessions_graph.settings import Settings

pytest.importorskip("starlette", reason="the viewer's extra [ui] is not installed")
pytest.importorskip("jinja2", reason="the viewer's extra [ui] is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary (apt-get install chromium)"
)

SCREENS = Path(os.environ.get("SESSIONS_GRAPH_SCREENS") or "/work/screens")
CLAUDE = "/home/alice/.claude/projects/-src-orion/{}.jsonl"
CODEX = "/home/alice/.codex/sessions/2026/01/rollout-2026-01-07T10-00-00-{}.jsonl"


def _record(
    graph: SessionsGraph,
    sid: str,
    user: str,
    started: str,
    project: str,
    transcript: str | None,
    turns: list[tuple[str, str, str]],
) -> None:
    graph.record_session_start(
        sid, user_id=user, cwd=f"/src/{project}", project_key=project, started_at=started
    )
    actions = []
    for i, (request, command, answer) in enumerate(turns):
        actions += [
            {"action_id": f"{sid}-u{i}", "action_type": "user_message", "text": request},
            {
                "action_id": f"{sid}-c{i}",
                "action_type": "tool_call",
                "tool_name": "Bash",
                "tool_use_id": f"{sid}-t{i}",
                "text": command,
            },
            {
                "action_id": f"{sid}-r{i}",
                "action_type": "tool_result",
                "tool_use_id": f"{sid}-t{i}",
                "text": "ok\nok",
            },
            {"action_id": f"{sid}-a{i}", "action_type": "assistant_message", "text": answer},
        ]
    graph.record_actions(sid, actions, user_id=user)
    if transcript:
        graph.set_import_cursor(sid, transcript.format(sid), 0)
    graph.record_session_end(sid)


@pytest.fixture(scope="module")
def store() -> Iterator[dict[str, str]]:
    """Alice's three sessions (two reconciled, so they have entities), her
    memories, and bob's session and memory, which her viewer must never show."""
    root = Path(tempfile.mkdtemp(prefix="sg-ui-"))
    db = root / "store.db"
    with SessionsGraph(settings=Settings(db=str(db))) as graph:
        graph.setup()
        _record(
            graph,
            "s-pool",
            "alice",
            "2026-01-03T09:00:00Z",
            "orion",
            CLAUDE,
            [
                (
                    "Configure pgbouncer for the orion Postgres database",
                    '{"command": "psql -c \'show pool_mode\'"}',
                    "pgbouncer now runs in transaction mode in front of Postgres.",
                ),
            ],
        )
        _record(
            graph,
            "s-cache",
            "alice",
            "2026-01-06T09:00:00Z",
            "orion",
            CLAUDE,
            [
                (
                    "Why is the Redis cache of orion cold after deploys?",
                    '{"command": "redis-cli info stats"}',
                    "The deploy flushes Redis; warm it from Postgres with a job.",
                ),
                (
                    "Write that warm-up job",
                    '{"command": "pytest tests/test_warmup.py"}',
                    "Done: the job warms Redis from Postgres in 40 s.",
                ),
            ],
        )
        _record(
            graph,
            "s-atlas",
            "alice",
            "2026-01-07T09:00:00Z",
            "atlas",
            CODEX,
            [
                (
                    "Port the atlas importer to Rust",
                    '{"command": "cargo build"}',
                    "The importer builds with cargo.",
                ),
            ],
        )
        _record(
            graph,
            "b-plan",
            "bob",
            "2026-01-08T09:00:00Z",
            "orion",
            None,
            [
                ("bobs hidden pgbouncer plan", '{"command": "true"}', "bobs answer"),
            ],
        )
        for sid in ("s-pool", "s-cache"):
            graph.reconcile_session_sync(sid, extractor="local")
        graph.save_memory("alice", "Alice prefers transaction pooling in pgbouncer", "s-pool")
        graph.save_memory("alice", "Orion deploys flush the Redis cache")
        graph.save_memory("bob", "bob keeps his pgbouncer notes private")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSIONS_GRAPH_")}
    env.update(
        SESSIONS_GRAPH_DB=str(db),
        SESSIONS_GRAPH_USER_ID="alice",
        SESSIONS_GRAPH_STATE_DIR=str(root / "state"),
        XDG_CONFIG_HOME=str(root / "config"),
        HOME=str(root / "home"),
    )
    yield env
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def viewer(store: dict[str, str]) -> Iterator[dict[str, str]]:
    """A running ``sessions-graph ui --port 0``: its base URL and token."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sessions_graph", "ui", "--port", "0"],
        env=store,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:(\d+)/)\?token=([\w-]+)", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield {"base": found.group(1), "port": found.group(2), "token": found.group(3)}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _url(viewer: dict[str, str], path: str, *, token: bool = True, **params: str) -> str:
    query = {**params, **({"token": viewer["token"]} if token else {})}
    return viewer["base"] + path.lstrip("/") + ("?" + urllib.parse.urlencode(query))


def _chromium(*args: str) -> str:
    with tempfile.TemporaryDirectory(prefix="sg-chromium-") as profile:
        proc = subprocess.run(
            [
                CHROMIUM or "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--window-size=1280,1000",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def dom(url: str, *flags: str) -> str:
    """The page's DOM after the browser loaded it."""
    return _chromium(*flags, "--dump-dom", url)


def shot(url: str, name: str) -> None:
    """A screenshot of the page, for a person to look at (not asserted)."""
    if SCREENS.is_dir() or os.environ.get("SESSIONS_GRAPH_SCREENS"):
        SCREENS.mkdir(parents=True, exist_ok=True)
        _chromium(f"--screenshot={SCREENS / name}", url)


def _text(html: str) -> str:
    """The page's visible words, tags dropped, whitespace collapsed."""
    body = re.sub(r"<(style|title)>.*?</\1>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _post(
    viewer: dict[str, str],
    path: str,
    data: dict[str, str],
    *,
    token: bool = True,
    origin: str | None = None,
) -> int:
    request = urllib.request.Request(
        _url(viewer, path, token=token),
        data=urllib.parse.urlencode(data).encode(),
        method="POST",
        headers={"Origin": origin} if origin else {},
    )

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_sessions_page_shows_the_users_timeline(viewer: dict[str, str]) -> None:
    html = dom(_url(viewer, "/"))
    codex = dom(_url(viewer, "/", client="codex"))
    words = dom(_url(viewer, "/", q="redis cold"))
    nothing = dom(_url(viewer, "/", q="kubernetes"))
    shot(_url(viewer, "/"), "sessions.png")

    rows = re.findall(r'data-session="([^"]+)"', html)
    assert rows == ["s-atlas", "s-cache", "s-pool"]  # per project, newest first; never bob's
    assert html.index(">atlas <") < html.index(">orion <")
    text = _text(html)
    assert "Why is the Redis cache of orion cold after deploys?" in text
    assert "bob" not in text.replace("user alice", "")
    assert re.findall(r'data-session="([^"]+)"', codex) == ["s-atlas"]
    assert re.findall(r'data-session="([^"]+)"', words) == ["s-cache"]
    assert "no session matches these filters" in _text(nothing)


def test_session_page_shows_exchanges_tools_and_entities(viewer: dict[str, str]) -> None:
    url = _url(viewer, "/session/s-cache")
    text = _text(dom(url))
    shot(url, "session.png")

    # The digest the façade built when the session was shown: its goal and what it ran.
    assert "goal Why is the Redis cache" in text
    assert "ran pytest tests/test_warmup.py redis-cli info stats" in text
    assert '* Bash {"command": "redis-cli info stats"} -> 2 lines' in text
    exchanges = text[text.index("Exchanges") :]  # the digest above names them too
    assert (
        exchanges.index("redis-cli")
        < exchanges.index("Write that warm-up job")
        < exchanges.index("pytest tests/test_warmup.py")
    )
    assert "Redis" in re.search(r"Entities (.*?) Injected context", text).group(1)
    assert "nothing injected into this session is recorded" in text


def test_a_session_of_another_user_is_not_found(viewer: dict[str, str]) -> None:
    text = _text(dom(_url(viewer, "/session/b-plan")))
    assert "session b-plan not found for user alice" in text
    assert "hidden" not in text


def test_entities_graph_links_to_the_sessions_that_mention_one(viewer: dict[str, str]) -> None:
    url = _url(viewer, "/entities")
    html = dom(url)
    shot(url, "entities.png")

    assert "<svg" in html and 'id="entity-graph"' in html
    nodes = re.findall(r'class="entity-node"><title>([^(<]+) \(', html)
    assert {"Redis", "Postgres"} <= {n.strip() for n in nodes}
    assert "<line" in html  # Redis and Postgres share a session
    link = re.search(r'<a href="(/\?[^"]*entity=Redis[^"]*)" class="entity-node"', html)
    assert link, "no link from the Redis node"
    followed = dom(viewer["base"] + link.group(1).lstrip("/").replace("&amp;", "&"))
    assert re.findall(r'data-session="([^"]+)"', followed) == ["s-cache"]
    assert "Sessions that mention Redis" in _text(followed)


def test_recall_shows_hits_with_lanes_and_scores(viewer: dict[str, str]) -> None:
    url = _url(viewer, "/recall", q="pgbouncer pooling")
    html = dom(url)
    shot(url, "recall.png")
    missing = _text(dom(_url(viewer, "/recall", q="kubernetes helm chart")))

    hits = re.findall(r'<tr class="hit">(.*?)</tr>', html, re.S)
    assert hits, _text(html)
    first = _text(hits[0])
    assert re.match(r"\d\.\d{4} ", first)
    lanes = {lane for hit in hits for lane in re.findall(r'<span class="tag">(\w+)</span>', hit)}
    assert lanes & {"keyword", "memories"}
    assert "transaction" in _text(html)
    assert "bob" not in _text(html).replace("user alice", "")
    assert "nothing recalled for kubernetes helm chart" in missing


def test_injections_page_says_none_are_recorded(viewer: dict[str, str]) -> None:
    url = _url(viewer, "/injections")
    text = _text(dom(url))
    shot(url, "injections.png")
    assert "no injection recorded yet" in text


def test_memories_list_search_edit_delete(viewer: dict[str, str]) -> None:
    url = _url(viewer, "/memories")
    html = dom(url)
    shot(url, "memories.png")
    ids = dict(re.findall(r'data-memory="([^"]+)">.*?<span class="content">([^<]+)<', html, re.S))
    assert sorted(ids.values()) == [
        "Alice prefers transaction pooling in pgbouncer",
        "Orion deploys flush the Redis cache",
    ]
    pooling = next(i for i, c in ids.items() if "pooling" in c)
    redis = next(i for i, c in ids.items() if "Redis" in c)
    found = _text(dom(_url(viewer, "/memories", q="pooling")))
    assert "transaction pooling" in found and "Redis" not in found
    shot(_url(viewer, "/memories", edit=pooling), "memory-edit.png")

    assert _post(viewer, f"/memories/{pooling}/edit", {"content": "Alice pools per session"}) == 303
    assert _post(viewer, f"/memories/{redis}/delete", {}) == 303
    after = _text(dom(url))
    assert "Alice pools per session" in after and "Redis cache" not in after
    missing = _post(viewer, f"/memories/{redis}/delete", {})
    assert missing == 404


def test_the_viewer_refuses_a_foreign_host_and_a_missing_token(viewer: dict[str, str]) -> None:
    # A page of evil.example whose name now resolves to 127.0.0.1 (DNS
    # rebinding), in the browser itself: refused before any data is read.
    rebound = dom(
        f"http://evil.example:{viewer['port']}/memories?token={viewer['token']}",
        "--host-resolver-rules=MAP evil.example 127.0.0.1",
    )
    no_token = dom(_url(viewer, "/memories", token=False))
    wrong = dom(viewer["base"] + "memories?token=wrong")
    shot(_url(viewer, "/memories", token=False), "refused-no-token.png")
    localhost = dom(_url(viewer, "/memories").replace("127.0.0.1", "localhost"))

    assert "forbidden: this viewer answers only to 127.0.0.1 or localhost" in _text(rebound)
    for page in (no_token, wrong):
        assert "forbidden: open the URL" in _text(page) and "data-memory" not in page
    assert "data-memory" in localhost and "forbidden" not in localhost
    # Writes: no token, or a form posted from another site, change nothing.
    html = dom(_url(viewer, "/memories"))
    memory_id = re.search(r'data-memory="([^"]+)"', html).group(1)
    assert _post(viewer, f"/memories/{memory_id}/delete", {}, token=False) == 403
    assert _post(viewer, f"/memories/{memory_id}/delete", {}, origin="http://evil.example") == 403
    assert f'data-memory="{memory_id}"' in dom(_url(viewer, "/memories"))


def test_the_port_in_use_is_one_line(store: dict[str, str], viewer: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sessions_graph", "ui", "--port", viewer["port"]],
        env=store,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (
        f"error: cannot listen on 127.0.0.1:{viewer['port']} (Address already in use):"
        " pass --port N\n"
    )
