"""Interactions through real hook processes: a prompt the hook injects
context for is recorded with what was injected, the turn's reply answers it
at Stop (with ``used`` marks), and a compacted session gets its own story
back at SessionStart."""

from __future__ import annotations

from pathlib import Path

from test_hooks_helpers import ClaudeTranscript
from test_hooks_inject import hook, injected, past_session, payload

from sessions_graph.graph import SessionsGraph
from sessions_graph.settings import load_settings


def _graph() -> SessionsGraph:
    return SessionsGraph(settings=load_settings())


def test_prompt_injection_is_an_interaction_the_reply_answers(tmp_path: Path, db: Path) -> None:
    project = tmp_path / "orion"
    (project / ".git").mkdir(parents=True)
    past_session(
        tmp_path,
        project,
        "s-cache",
        [
            ("Which database should the orion cache use?", "SQLite in WAL mode, file cache_v2.db."),
            ("Add a changelog entry", "Added."),
        ],
    )
    transcript = ClaudeTranscript(tmp_path / "s-now.jsonl", "s-now", str(project))
    start = payload("SessionStart", "s-now", project, transcript.path, source="startup")
    assert hook(start).returncode == 0
    prompt = "Remind me, what database did we pick for the orion cache?"
    context = injected(
        hook(payload("UserPromptSubmit", "s-now", project, transcript.path, prompt=prompt)),
        "UserPromptSubmit",
    )
    assert "cache_v2.db" in context
    with _graph() as graph:
        [asked] = graph.interactions("alice", "s-now")
    assert (asked.question, asked.source, asked.answer) == (prompt, "prompt", None)
    assert len(asked.context) == 1  # one item injected
    assert "cache_v2.db" in asked.context[0].text

    transcript.user(prompt)
    transcript.assistant("We picked SQLite in WAL mode; the file is cache_v2.db.")
    assert hook(payload("Stop", "s-now", project, transcript.path)).returncode == 0
    with _graph() as graph:
        [answered] = graph.interactions("alice", "s-now")
        usage = graph.status("alice")["interactions"]
    assert answered.answer == "We picked SQLite in WAL mode; the file is cache_v2.db."
    assert [item.used for item in answered.context] == [True]
    assert usage[0]["session_id"] == "s-now" and usage[0]["used_share"] == 1.0

    # After a compaction the session's own exchange comes back, not other sessions.
    compact = payload("SessionStart", "s-now", project, transcript.path, source="compact")
    story = injected(hook(compact), "SessionStart")
    assert 'kind="this-session-so-far"' in story
    assert "what database did we pick" in story and "cache_v2.db" in story
    startup = payload("SessionStart", "s-later", project, source="startup")
    assert 'kind="where-you-left-off"' in injected(hook(startup), "SessionStart")
