"""What one hook payload does to the store, applied in-process through
``handle_payload`` (the function the hook process and the spool replay share):
whose event it is, and which transcript names which session."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.errors import MemoryValidationError
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks.handle import handle_payload
from sessions_graph.settings import Settings

#: A Codex session id: the UUID that ends its rollout file's name.
BOBS_CODEX_SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db=str(tmp_path / "x.db"), state_dir=str(tmp_path / "state"))


@pytest.fixture
def graph(settings: Settings) -> Iterator[SessionsGraph]:
    g = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    yield g
    g.close()


def _event(event: str, session_id: str, transcript: Path | None, **extra: str) -> dict:
    return json.loads(claude_payload(event, session_id, transcript, **extra))


@pytest.mark.parametrize(
    "name",
    [
        f"rollout-2026-11-29T10-00-00-{BOBS_CODEX_SESSION}.jsonl",
        f"rollout-x-{BOBS_CODEX_SESSION}.jsonl",  # the shortest time part: one character
    ],
)
def test_a_rollout_named_after_another_users_codex_session_is_not_taken(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, name: str
) -> None:
    """Codex names a rollout ``rollout-<time>-<session id>``: alice's event
    naming bob's rollout would record bob's lines not captured yet as hers."""
    handle_payload(graph, settings, _event("SessionStart", BOBS_CODEX_SESSION, None), "bob")
    rollout = ClaudeTranscript(tmp_path / name, "alice-s1")
    rollout.user("bob's uncaptured line")
    with pytest.raises(MemoryValidationError, match="not found for user 'alice'"):
        handle_payload(graph, settings, _event("Stop", "alice-s1", rollout.path), "alice")
    assert graph.get_actions("alice-s1") == [] and graph.session_owner("alice-s1") is None


@pytest.mark.parametrize(
    "name",
    [
        f"rollout--{BOBS_CODEX_SESSION}.jsonl",  # no time part: not Codex's naming
        f"rollout-2026-11-29T10-00-00_{BOBS_CODEX_SESSION}.jsonl",  # no dash before the id
        f"notes-2026-11-29T10-00-00-{BOBS_CODEX_SESSION}.jsonl",
    ],
)
def test_a_file_that_only_ends_with_a_session_id_names_no_session(
    tmp_path: Path, settings: Settings, graph: SessionsGraph, name: str
) -> None:
    handle_payload(graph, settings, _event("SessionStart", BOBS_CODEX_SESSION, None), "bob")
    transcript = ClaudeTranscript(tmp_path / name, "alice-s1")
    transcript.user("alice's own line")
    outcome = handle_payload(graph, settings, _event("Stop", "alice-s1", transcript.path), "alice")
    assert outcome.added == 1
    assert [a.text for a in graph.get_actions("alice-s1")] == ["alice's own line"]
    assert graph.session_owner("alice-s1") == "alice"


def test_a_transcript_not_written_yet_is_not_reported_as_rewritten(
    tmp_path: Path, settings: Settings, graph: SessionsGraph
) -> None:
    """Runtimes create the transcript lazily: an event naming one that does
    not exist yet imports nothing and says nothing about a rewrite."""
    outcome = handle_payload(
        graph, settings, _event("SessionStart", "s-1", tmp_path / "later.jsonl"), "alice"
    )
    assert (outcome.added, outcome.reread) == (0, False)
    assert "rewritten" not in outcome.summary()
    assert graph.session_owner("s-1") == "alice"
