"""One contract suite, run over every engine.

``graph`` is a fresh, set-up ``SessionsGraph`` on each engine: the embedded
engine always, Memgraph when ``MEMGRAPH_URL`` or ``MEMGRAPH_HOST`` is set.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_harness import claude_code, fake_anthropic  # noqa: F401 - shared fixtures
from codex_harness import codex, fake_responses  # noqa: F401 - shared fixtures
from falkordb_store import falkor, stores  # noqa: F401 - shared fixtures
from skip_reasons import pytest_terminal_summary  # noqa: F401 - one line per skip reason

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import Engine
from sessions_graph.settings import Settings

MEMGRAPH_CONFIGURED = bool(os.environ.get("MEMGRAPH_URL") or os.environ.get("MEMGRAPH_HOST"))


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's config, data or state, or reaches an LLM."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("SESSIONS_GRAPH_"):
            monkeypatch.delenv(var, raising=False)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The store file that ``sessions-graph`` processes a test starts find
    through the environment, acting for user alice."""
    path = tmp_path / "store.db"
    monkeypatch.setenv("SESSIONS_GRAPH_DB", str(path))
    monkeypatch.setenv("SESSIONS_GRAPH_USER_ID", "alice")
    return path


def _embedded(tmp_path: Path) -> Engine:
    from sessions_graph.engines.sqlite import SQLiteEngine

    return SQLiteEngine(str(tmp_path / "contract.db"))


def _memgraph() -> Engine:
    from sessions_graph.engines.memgraph import MemgraphEngine
    from sessions_graph.settings import load_settings

    settings = load_settings()
    engine = MemgraphEngine(
        settings.memgraph_uri,
        user=settings.memgraph_user,
        password=settings.memgraph_password,
        database=settings.memgraph_database or None,
    )
    engine.wipe_for_tests()
    return engine


@pytest.fixture(
    params=[
        "embedded",
        pytest.param(
            "memgraph",
            marks=pytest.mark.skipif(
                not MEMGRAPH_CONFIGURED, reason="MEMGRAPH_URL / MEMGRAPH_HOST not set"
            ),
        ),
    ]
)
def engine_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def graph(engine_name: str, tmp_path: Path) -> Iterator[SessionsGraph]:
    engine = _embedded(tmp_path) if engine_name == "embedded" else _memgraph()
    g = SessionsGraph(engine=engine, settings=Settings(db=str(tmp_path / "contract.db")))
    g.setup()
    try:
        yield g
    finally:
        if engine_name == "memgraph":
            engine.wipe_for_tests()  # type: ignore[attr-defined]
        g.close()
