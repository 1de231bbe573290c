"""Projects and digests in what the hook hands back: real hook processes,
real transcripts (the clients' own, from tests/fixtures/transcripts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript
from test_hooks_inject import hook, injected, past_session, payload

from sessions_graph.graph import SessionsGraph
from sessions_graph.project import project_key

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts" / "claude"
JOB_QUEUE = "0dd7190a-b596-4d76-9b17-29795f960e1f"  # writes a module, a failing test, decides RQ
THANKS = "f93cc1e1-5358-4070-9db1-46b2c9dfed85"  # "thanks, that's all for now"


def _repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def client_a(tmp_path: Path, db: Path) -> Path:
    return _repo(tmp_path / "w1" / "clientA" / "api")


@pytest.fixture
def client_b(tmp_path: Path, db: Path) -> Path:
    return _repo(tmp_path / "w2" / "clientB" / "api")


def _start(session_id: str, cwd: Path) -> str:
    return injected(
        hook(payload("SessionStart", session_id, cwd, source="startup")), "SessionStart"
    )


def test_a_project_of_the_same_name_sees_nothing_of_the_other(
    tmp_path: Path, client_a: Path, client_b: Path
) -> None:
    past_session(
        tmp_path, client_a, "a-1", [("Rotate the Acme billing keys in the api", "Rotated them.")]
    )
    past_session(tmp_path, client_b, "b-1", [("Add pagination to the listing", "Added it.")])
    with SessionsGraph() as graph:
        graph.save_memory("alice", "Acme billing runs on the 3rd", session_id="a-1")
        graph.save_memory("alice", "Listing pages hold 50 rows", session_id="b-1")
        graph.save_memory("alice", "Prefers short answers")  # no project: everywhere
    context = _start("b-now", client_b / "src")
    assert 'in project "api"' in context
    assert "session b-1" in context and "pagination" in context
    assert "Listing pages hold 50 rows" in context and "Prefers short answers" in context
    assert "Acme" not in context and "a-1" not in context

    context = _start("a-now", client_a)
    assert "Acme billing runs on the 3rd" in context and "pagination" not in context


def test_sessions_recorded_under_the_old_base_name_key_stay_with_their_project(
    tmp_path: Path, client_a: Path, client_b: Path
) -> None:
    """A store written before full keys: both clients' sessions are keyed "api"."""
    with SessionsGraph() as graph:
        for sid, cwd, request in (
            ("old-a", client_a, "Migrate the Acme invoices table"),
            ("old-b", client_b, "Add pagination to the listing"),
        ):
            graph.record_session_start(sid, user_id="alice", cwd=str(cwd), project_key="api")
            graph.record_actions(
                sid,
                [
                    {"action_id": f"{sid}-0", "action_type": "user_message", "text": request},
                    {"action_id": f"{sid}-1", "action_type": "assistant_message", "text": "Done."},
                ],
            )
    context = _start("a-now", client_a)
    assert "session old-a" in context and "old-b" not in context
    with SessionsGraph() as graph:
        assert graph.get_session("old-a").project_key == str(client_a)  # type: ignore[union-attr]
        assert graph.get_session("old-b").project_key == "api"  # type: ignore[union-attr]
    context = _start("b-now", client_b)
    assert "session old-b" in context and "Acme" not in context


def _client_session(tmp_path: Path, cwd: Path, name: str, end: bool = True) -> None:
    """A real Claude Code transcript, read by the hook at SessionStart / Stop / SessionEnd."""
    transcript = tmp_path / f"{name}.jsonl"
    shutil.copy(FIXTURES / f"{name}.jsonl", transcript)
    for event in ("SessionStart", "Stop", *(["SessionEnd"] if end else [])):
        result = hook(payload(event, name, cwd, transcript))
        assert result.returncode == 0, result.stderr


def test_where_you_left_off_shows_digests_and_skips_small_talk(tmp_path: Path, db: Path) -> None:
    project = _repo(tmp_path / "orion")
    _client_session(tmp_path, project, JOB_QUEUE)
    _client_session(tmp_path, project, THANKS, end=False)  # no SessionEnd: built at the start
    for sid, words in (("s-hello", "hello"), ("s-ok", "ok")):
        transcript = ClaudeTranscript(tmp_path / f"{sid}.jsonl", sid, str(project))
        transcript.user(words)
        transcript.assistant("Hi! How can I help?")
        assert hook(payload("Stop", sid, project, transcript.path)).returncode == 0
    with SessionsGraph() as graph:
        digest = graph.session_digest(JOB_QUEUE)
    assert digest is not None and digest["source"] == "offline"  # built at SessionEnd

    context = _start("s-now", project)
    lines = [x for x in context.splitlines() if x.startswith("- 20")]
    assert len(lines) == 1, context  # three small-talk sessions are not where work was left
    line = lines[0]
    assert f"session {JOB_QUEUE}" in line
    assert 'goal "Add a job queue module to orion and run the tests."' in line
    assert 'queue_module.py" (written)' in line  # the client's absolute path
    assert '"python3 -m unittest -q test_orion" (failed)' in line
    assert "We'll use RQ for the job queue." in line
    for small_talk in (THANKS, "s-hello", "s-ok"):
        assert small_talk not in context
    with SessionsGraph() as graph:  # small talk got its digest, saying so
        assert graph.session_digest(THANKS)["substance"] is False  # type: ignore[index]


# -- a prompt: this project first, another's above a higher floor, labelled ------
PROMPT = "Which database, queue and cache layer?"  # topic: database queue cache layer


@pytest.fixture
def two_projects(tmp_path: Path, db: Path) -> tuple[Path, Path]:
    orion, atlas = _repo(tmp_path / "orion"), _repo(tmp_path / "atlas")
    with SessionsGraph() as graph:
        other = project_key(str(orion))
        # Two of the four topic words: enough here, not across projects.
        graph.save_memory("alice", "Orion's cache database is SQLite", project_key=other)
        # All four: worth showing across projects.
        graph.save_memory(
            "alice", "Orion's cache layer puts a queue in front of the database", project_key=other
        )
        graph.save_memory("alice", "Atlas cache database: Postgres", project_key=str(atlas))
    return orion, atlas


def _prompt_context(atlas: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> str:
    monkeypatch.setenv("SESSIONS_GRAPH_INJECT_PROJECTS", mode)
    result = hook(payload("UserPromptSubmit", "s-atlas", atlas, prompt=PROMPT))
    return injected(result, "UserPromptSubmit")


def test_labelled_shows_another_project_only_above_the_higher_floor(
    two_projects: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, atlas = two_projects
    context = _prompt_context(atlas, monkeypatch, "labelled")
    lines = [x for x in context.splitlines() if x.startswith("- (")]
    assert len(lines) == 2, context
    assert "Postgres" in lines[0] and "project" not in lines[0]  # this project's first, unlabelled
    assert "queue in front" in lines[1] and ', project "orion", memory)' in lines[1]
    assert "is SQLite" not in context


def test_all_shows_another_project_at_the_same_floor_labelled(
    two_projects: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, atlas = two_projects
    context = _prompt_context(atlas, monkeypatch, "all")
    lines = [x for x in context.splitlines() if x.startswith("- (")]
    assert len(lines) == 3 and "Postgres" in lines[0], context
    assert all(', project "orion", memory)' in x for x in lines[1:])


def test_this_shows_this_project_only(
    two_projects: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, atlas = two_projects
    context = _prompt_context(atlas, monkeypatch, "this")
    lines = [x for x in context.splitlines() if x.startswith("- (")]
    assert len(lines) == 1 and "Postgres" in lines[0] and "project" not in lines[0], context
    assert "Orion" not in context
