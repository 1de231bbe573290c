"""History import, in-process and fast: which session a transcript's first
entries name (``history.read_head``), which files are imported and which are
skipped with what reason, in what order, and the one-line summary of a run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hooks_helpers import ClaudeTranscript, codex_rollout_lines

from sessions_graph.engines.sqlite import SQLiteEngine
from sessions_graph.errors import MemoryValidationError
from sessions_graph.graph import SessionsGraph
from sessions_graph.hooks import history
from sessions_graph.hooks.history import FileResult, Head, ImportSummary, read_head
from sessions_graph.settings import Settings

SID = "9f3c1e52-7a4b-4c1d-9e8f-2b6a0d4c7e11"
CODEX_SID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
OTHER_UUID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
T1 = "2026-11-29T10:00:01.000000+00:00"
T2 = "2026-11-29T10:00:02.000000+00:00"


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[SessionsGraph]:
    g = SessionsGraph(
        engine=SQLiteEngine(tmp_path / "store.db"), settings=Settings(user_id="alice")
    )
    yield g
    g.close()


def _write(path: Path, *entries: dict[str, Any] | str, end: str = "\n") -> Path:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def _message(kind: str = "user", **fields: Any) -> dict[str, Any]:
    """A Claude Code message entry; fields given as None are left out."""
    entry = {
        "type": kind,
        "uuid": f"u-{kind}-{len(fields)}",
        "sessionId": SID,
        "cwd": "/src/orion",
        "timestamp": "2026-11-29T10:00:01Z",
        "isSidechain": False,
        "message": {"role": kind, "content": "hello there"},
        **fields,
    }
    return {k: v for k, v in entry.items() if v is not None}


def _queued(**fields: Any) -> dict[str, Any]:
    """Claude Code's queued prompt: dated, with the session, no message."""
    return {
        "type": "queue-operation",
        "operation": "enqueue",
        "sessionId": SID,
        "timestamp": "2026-11-29T10:00:01Z",
        "content": "a queued prompt",
        **fields,
    }


# -- a Claude Code transcript ---------------------------------------------------


def test_a_claude_transcript_names_its_session_start_and_cwd(tmp_path: Path) -> None:
    path = _write(
        tmp_path / f"{SID}.jsonl",
        {"type": "summary", "summary": "Setup", "leafUuid": "x"},  # first, as Claude Code writes
        _queued(cwd="/src/orion"),
        _message(timestamp="2026-11-29T10:00:02Z", cwd="/elsewhere"),
    )
    assert read_head(path) == Head("claude", SID, T1, "/src/orion", False)


def test_a_resumed_transcript_is_the_session_it_is_named_after(tmp_path: Path) -> None:
    """Entries copied from the session it resumes carry the old id; the hooks
    send the new one, the file's name."""
    path = _write(tmp_path / "new-session-1.jsonl", _message(sessionId="old-session"))
    assert read_head(path).session_id == "new-session-1"
    unnamed = _write(tmp_path / "my notes.jsonl", _message(sessionId="old-session"))
    assert read_head(unnamed).session_id == "old-session"


def test_entries_without_the_session_field_still_make_a_conversation(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{SID}.jsonl", _message(sessionId=None))
    assert read_head(path) == Head("claude", SID, T1, "/src/orion", False)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"cwd": None}, {}),  # the cwd only in a later entry
        ({"sessionId": None}, {}),  # the session only in a later entry
        ({"timestamp": None}, {"timestamp": "2026-11-29T10:00:01Z"}),
        ({"timestamp": 1764410401}, {"timestamp": "2026-11-29T10:00:01Z"}),  # not a time
        ({"timestamp": "not a time"}, {"timestamp": "2026-11-29T10:00:01Z"}),
        ({"cwd": 42}, {}),  # not a path
        ({"cwd": ""}, {}),
    ],
)
def test_what_the_first_entries_lack_is_read_from_the_next(
    tmp_path: Path, first: dict[str, Any], second: dict[str, Any]
) -> None:
    """Reading stops once the session, its start, its cwd and its kind are
    known: not before."""
    path = _write(
        tmp_path / "my notes.jsonl",
        _message(**first),
        _message("assistant", **{"timestamp": "2026-11-29T10:00:05Z", **second}),
    )
    assert read_head(path) == Head("claude", SID, T1, "/src/orion", False)


def test_a_queued_prompt_alone_is_no_conversation(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{SID}.jsonl", _queued(cwd="/src/orion"), _queued())
    assert read_head(path).kind is None
    with_message = _write(tmp_path / "b.jsonl", _queued(cwd="/src/orion"), _message("system"))
    assert read_head(with_message).kind == "claude"


def test_a_subagent_transcript_is_marked_as_one(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{SID}.jsonl", _message(isSidechain=True))
    assert read_head(path).sidechain is True
    main = _write(tmp_path / "main.jsonl", _message(), _message("assistant", isSidechain="yes"))
    assert read_head(main).sidechain is False


def test_the_first_2000_lines_are_searched_for_the_conversation(tmp_path: Path) -> None:
    noise = json.dumps({"type": "summary", "summary": "s", "leafUuid": "x"})
    inside = _write(tmp_path / "inside.jsonl", *[noise] * 1999, _message())
    assert read_head(inside).kind == "claude"
    beyond = _write(tmp_path / "beyond.jsonl", *[noise] * 2000, _message())
    assert read_head(beyond).kind is None


def test_a_line_of_8_mib_is_read_and_a_longer_one_stepped_over(tmp_path: Path) -> None:
    """A first line of 8 MiB, its newline included, is read whole; one byte
    more and it is stepped over, the lines after it still read."""
    limit = 8 * 1024 * 1024

    def padded(size: int) -> str:
        entry = json.dumps(_queued(cwd="/big", pad=""))
        return entry.replace('"pad": ""', '"pad": "' + "x" * (size - 1 - len(entry)) + '"')

    after = _message(timestamp="2026-11-29T10:00:02Z", cwd="/after")
    whole = _write(tmp_path / "whole.jsonl", padded(limit), after)
    assert whole.stat().st_size == limit + len(json.dumps(after)) + 1
    assert read_head(whole) == Head("claude", "whole", T1, "/big", False)
    over = _write(tmp_path / "over.jsonl", padded(limit + 1), after)
    assert read_head(over) == Head("claude", "over", T2, "/after", False)


def test_a_last_line_without_its_newline_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path / f"{SID}.jsonl", _message(), end="")
    assert read_head(path).kind == "claude"


# -- a Codex rollout --------------------------------------------------------------


def _rollout(tmp_path: Path, name_id: str, lines: list[dict[str, Any]]) -> Path:
    return _write(tmp_path / f"rollout-2026-11-29T10-00-00-{name_id}.jsonl", *lines)


def test_a_rollout_names_the_session_of_its_meta_dated_by_the_meta(tmp_path: Path) -> None:
    lines = codex_rollout_lines(CODEX_SID)
    lines[0]["timestamp"] = "2026-11-29T10:00:02Z"  # the envelope's time comes after
    lines[0]["payload"]["timestamp"] = "2026-11-29T10:00:01Z"
    path = _rollout(tmp_path, OTHER_UUID, lines)  # named after another id
    assert read_head(path) == Head("codex", CODEX_SID, T1, "/home/dev/project", False)


def test_a_rollout_without_a_meta_is_named_by_its_file(tmp_path: Path) -> None:
    items = [line for line in codex_rollout_lines(CODEX_SID) if line["type"] != "session_meta"]
    path = _rollout(tmp_path, OTHER_UUID, items)
    head = read_head(path)
    assert (head.kind, head.session_id, head.cwd) == ("codex", OTHER_UUID, None)
    assert head.started_at == "2026-11-29T10:00:00.000000+00:00"  # the first envelope's
    bare = [line["payload"] for line in items]  # older rollouts: the items alone
    assert read_head(_rollout(tmp_path, CODEX_SID, bare)).session_id == CODEX_SID
    elsewhere = _write(tmp_path / "copy.jsonl", *bare)
    assert read_head(elsewhere) == Head("codex", None, None, None, False)


def test_a_meta_without_an_id_or_time_leaves_them_to_what_follows(tmp_path: Path) -> None:
    lines = codex_rollout_lines(CODEX_SID)
    del lines[0]["payload"]["id"]
    lines[0]["payload"]["cwd"] = ""
    lines[1]["payload"]["cwd"] = "/later"  # not a real field of an item, but read as one
    lines[0]["timestamp"] = "garbage"
    path = _rollout(tmp_path, OTHER_UUID, lines)
    assert read_head(path) == Head(
        "codex", OTHER_UUID, "2026-11-29T10:00:00.000000+00:00", "/later", False
    )


def test_a_legacy_rollout_opens_with_its_id(tmp_path: Path) -> None:
    legacy = {"id": CODEX_SID, "timestamp": "2026-11-29T10:00:01Z", "instructions": ""}
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    path = _rollout(tmp_path, OTHER_UUID, [legacy, item])
    assert read_head(path) == Head("codex", CODEX_SID, T1, None, False)
    # Only as the first line, and only with that shape.
    later = _write(tmp_path / "later.jsonl", item, legacy)
    assert read_head(later).session_id is None
    for extra in ({"uuid": "u1"}, {"type": "x"}):
        odd = _write(tmp_path / "odd.jsonl", {**legacy, **extra})
        assert read_head(odd).kind is None


# -- finding files ---------------------------------------------------------------


def test_the_runtimes_own_history_directories_are_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert history.default_sources() == [
        tmp_path / ".claude" / "projects",
        tmp_path / ".codex" / "sessions",
    ]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "x"))
    assert history.default_sources() == [tmp_path / "c" / "projects", tmp_path / "x" / "sessions"]


def test_transcripts_are_found_by_file_and_by_directory(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    one = _write(tmp_path / "a" / "one.jsonl", _message())
    two = _write(tmp_path / "a" / "b" / "two.jsonl", _message())
    (tmp_path / "a" / "notes.txt").write_text("x")
    assert history.find_transcripts([tmp_path / "a", one]) == [two, one]
    with pytest.raises(MemoryValidationError, match=r"not a \.jsonl transcript"):
        history.find_transcripts([tmp_path / "a" / "notes.txt"])


# -- importing files ---------------------------------------------------------------


def test_each_file_is_imported_or_skipped_with_its_reason(
    tmp_path: Path, graph: SessionsGraph
) -> None:
    own = ClaudeTranscript(tmp_path / f"{SID}.jsonl", SID)
    own.user("rename the flag")
    own.assistant("Renamed.")
    graph.record_session_start("bobs-session", user_id="bob")
    bobs = ClaudeTranscript(tmp_path / "bobs-session.jsonl", "bobs-session")
    bobs.user("bob's request")
    side = _write(tmp_path / "agent-1.jsonl", _message(isSidechain=True))
    noise = _write(tmp_path / "noise.jsonl", {"type": "summary", "summary": "s"})
    nameless = _write(tmp_path / "nameless.jsonl", {"type": "message", "role": "user"})
    bad_id = _write(tmp_path / "bad id!.jsonl", _message(sessionId="-no"))
    gone = tmp_path / "gone.jsonl"
    seen: list[FileResult] = []
    files = [own.path, bobs.path, side, noise, nameless, bad_id, gone]
    summary = history.import_history(graph, files, "alice", on_file=seen.append)
    why = {r.path.name: (r.skipped, r.error is not None, r.added) for r in seen}
    assert why == {
        f"{SID}.jsonl": (None, False, 2),
        "bobs-session.jsonl": (history.SKIP_OTHER_USER, False, 0),
        "agent-1.jsonl": (
            "a subagent transcript (its parent session holds the conversation)",
            False,
            0,
        ),
        "noise.jsonl": ("no Claude Code or Codex conversation in it", False, 0),
        "nameless.jsonl": ("no valid session id", False, 0),
        "bad id!.jsonl": ("no valid session id", False, 0),
        "gone.jsonl": (None, True, 0),
    }
    assert summary.as_dict() == {
        "files": 7,
        "sessions": 1,
        "added": 2,
        "skipped": 5,
        "other_user": 1,
        "failed": 1,
        "foreign": 0,
    }
    assert summary.line() == (
        "imported 7 files: 1 session, 2 new actions, 5 skipped (1 of another user), 1 failed"
    )
    assert graph.get_actions("bobs-session") == []
    assert [s["session_id"] for s in graph.pending_sessions(plain=True)] == [SID]


def test_the_summary_counts_in_the_singular_and_the_plural() -> None:
    empty = ImportSummary()
    assert empty.line() == "imported 0 files: 0 sessions, 0 new actions, 0 skipped"
    one = ImportSummary()
    one.add(FileResult(Path("a.jsonl"), "s", added=1, foreign=1234))
    assert one.line() == (
        "imported 1 file: 1 session, 1 new action, 0 skipped;"
        " 1,234 actions were already another session's (resumed sessions)"
    )
    one.add(FileResult(Path("b.jsonl"), skipped="no valid session id"))
    assert one.as_dict()["other_user"] == 0 and one.as_dict()["skipped"] == 1


def test_files_are_imported_oldest_session_first(tmp_path: Path, graph: SessionsGraph) -> None:
    """A resumed session repeats the entries of the one it resumes, and an
    action is the session's that recorded it first: the older goes first,
    whatever the files' names or when they were last written."""
    older = _write(tmp_path / "b-older.jsonl", _message(timestamp="2026-11-29T09:00:00Z"))
    newer = _write(tmp_path / "a-newer.jsonl", _message(timestamp="2026-11-29T10:00:00Z"))
    undated = _write(tmp_path / "0-undated.jsonl", _message(timestamp=None))
    os.utime(older, (2_000_000_000, 2_000_000_000))  # written last
    seen: list[str] = []
    history.import_history(
        graph, [undated, newer, older], "alice", on_file=lambda r: seen.append(r.path.name)
    )
    assert seen == ["b-older.jsonl", "a-newer.jsonl", "0-undated.jsonl"]
    assert len(graph.get_actions("b-older")) == 1
    assert graph.get_actions("a-newer") == []  # its one entry was b-older's already
