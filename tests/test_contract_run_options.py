"""A reconciliation run's options are checked before anything is claimed."""

from __future__ import annotations

import pytest
from reconcile_scripted import ScriptedLLM

from sessions_graph import ConfigError, MemoryValidationError, SessionsGraph
from sessions_graph.graph import open_engine
from sessions_graph.settings import Settings


@pytest.mark.parametrize(
    "options",
    [
        {"lease_seconds": 0},
        {"lease_seconds": -1},
        {"lease_seconds": float("nan")},
        {"lease_seconds": "60"},
        {"lease_seconds": float("inf")},
        {"lease_seconds": 1e308},
        {"lease_seconds": 86_401},
        {"lease_seconds": 0.5},
        {"concurrency": 0},
        {"concurrency": 2.5},
        {"concurrency": 10**9},
        {"entity_workspace": "no spaces"},
    ],
)
def test_bad_run_options_are_refused_and_claim_nothing(graph: SessionsGraph, options: dict) -> None:
    graph.record_actions(
        "s-1",
        [{"action_id": "a-1", "action_type": "user_message", "text": "Orion ships Friday"}],
        user_id="alice",
    )
    graph.record_session_end("s-1")
    model = ScriptedLLM()
    with pytest.raises(MemoryValidationError):
        graph.reconcile_session_sync("s-1", llm_model_func=model, **options)
    with pytest.raises(MemoryValidationError):
        import asyncio

        asyncio.run(graph.reconcile_pending(llm_model_func=model, **options))
    assert model.calls == 0
    assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]


def test_an_unknown_engine_is_a_configuration_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="unknown engine"):
        open_engine(Settings(engine="postgres", db=str(tmp_path / "x.db")))


@pytest.mark.parametrize(
    ("key", "value"),
    [("llm_concurrency", "0"), ("llm_concurrency", "100000"), ("memgraph_port", "70000")],
)
def test_numeric_settings_are_bounded(key: str, value: str) -> None:
    from sessions_graph.settings import coerce

    with pytest.raises(ConfigError, match=key):
        coerce(key, value)
