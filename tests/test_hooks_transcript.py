"""Transcript parsing: Claude Code and Codex lines to actions, cursor semantics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hooks_helpers import ClaudeTranscript, claude_payload, codex_rollout_lines

from sessions_graph import SessionsGraph
from sessions_graph.hooks import codex, transcript
from sessions_graph.hooks.handle import prompt_action
from sessions_graph.hooks.transcript import import_actions, read_complete_lines


def test_claude_transcript_yields_messages_tool_calls_and_results(tmp_path: Path) -> None:
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s1")
    t.noise()
    prompt = t.user("Fix the failing test")
    tool_id, _, _ = t.tool_use("Bash", {"command": "pytest -x"}, "1 failed")
    answer = t.assistant("Fixed it.")
    actions, cursor, *_ = import_actions(t.path, 0, "s1")
    assert cursor == t.path.stat().st_size
    assert [a["action_type"] for a in actions] == [
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]
    assert actions[0]["action_id"] == prompt["uuid"]
    assert actions[0]["text"] == "Fix the failing test"
    call, result = actions[1], actions[2]
    # The tool_use is block 1 (block 0 is thinking, skipped): the index keeps ids stable.
    assert call["action_id"].endswith(":1")
    assert (call["tool_name"], call["tool_use_id"]) == ("Bash", tool_id)
    assert json.loads(call["text"]) == {"command": "pytest -x"}
    assert (result["tool_use_id"], result["text"], result["is_error"]) == (
        tool_id,
        "1 failed",
        False,
    )
    assert actions[3]["action_id"] == answer["uuid"]
    assert actions[3]["timestamp"] == answer["timestamp"]


def test_half_written_last_line_is_left_for_next_time(tmp_path: Path) -> None:
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s1")
    t.user("first")
    complete = t.path.stat().st_size
    second = json.dumps(t._entry("user", "second")) + "\n"
    with open(t.path, "a") as fh:
        fh.write(second[:25])
    actions, cursor, *_ = import_actions(t.path, 0, "s1")
    assert [a["text"] for a in actions] == ["first"]
    assert cursor == complete
    with open(t.path, "a") as fh:
        fh.write(second[25:])
    actions, cursor, *_ = import_actions(t.path, cursor, "s1")
    assert [a["text"] for a in actions] == ["second"]
    assert cursor == t.path.stat().st_size
    assert import_actions(t.path, cursor, "s1")[:3] == ([], cursor, 0)


def test_missing_transcript_is_empty_and_shrunk_one_is_reread(tmp_path: Path) -> None:
    assert read_complete_lines(tmp_path / "nope.jsonl", 0)[:3] == ([], 0, 0)
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": 1}\n')
    lines, cursor, *_ = read_complete_lines(path, 10_000)
    assert lines == [(0, b'{"a": 1}\n')] and cursor == 9


def test_malformed_and_hostile_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = {"type": "user", "uuid": "u-1", "message": {"content": "ok"}}
    lines = [
        "not json",
        "[1, 2]",
        json.dumps(
            {"type": "user", "uuid": "x'; DROP TABLE actions; --", "message": {"content": "a"}}
        ),
        json.dumps({"type": "user", "uuid": "}) DETACH DELETE n //", "message": {"content": "b"}}),
        json.dumps({"type": "user", "uuid": "bad\u0000id", "message": {"content": "c"}}),
        json.dumps({"type": "assistant", "uuid": "u-2", "message": {"content": 42}}),
        "[" * 100_000,
        json.dumps(good),
    ]
    path.write_text("\n".join(lines) + "\n")
    actions, *_ = import_actions(path, 0, "s1")
    assert [(a["action_id"], a["text"]) for a in actions] == [("u-1", "ok")]


def test_meta_and_system_entries_become_system_messages(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = [
        {"type": "user", "uuid": "m1", "isMeta": True, "message": {"content": "<command-name>"}},
        {"type": "system", "uuid": "m2", "content": "Conversation compacted", "level": "info"},
        {"type": "user", "uuid": "m3", "message": {"content": [{"type": "image", "source": {}}]}},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    actions, *_ = import_actions(path, 0, "s1")
    assert [(a["action_id"], a["action_type"]) for a in actions] == [
        ("m1", "system_message"),
        ("m2", "system_message"),
    ]


def test_codex_rollout_lines(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-11-29T10-00-00-abc.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in codex_rollout_lines("cx1")))
    actions, *_ = import_actions(path, 0, "cx1")
    assert [(a["action_type"], a["text"]) for a in actions] == [
        ("system_message", "<environment_context>cwd</environment_context>"),
        ("user_message", "list files"),
        ("tool_call", '{"command":["ls"]}'),
        ("tool_result", "README.md"),
        ("assistant_message", "One file."),
    ]
    assert actions[2]["tool_name"] == "shell" and actions[2]["tool_use_id"] == "call_1"
    assert actions[3]["tool_use_id"] == "call_1" and not actions[3]["is_error"]
    again, *_ = import_actions(path, 0, "cx1")
    assert [a["action_id"] for a in again] == [a["action_id"] for a in actions]
    assert len({a["action_id"] for a in actions}) == len(actions)


def test_codex_legacy_bare_items(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        json.dumps(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        )
        + "\n"
    )
    actions, *_ = import_actions(path, 0, "cx1")
    assert [(a["action_type"], a["text"]) for a in actions] == [("user_message", "hi")]


def test_codex_notify_payload() -> None:
    payload = {
        "type": "agent-turn-complete",
        "thread-id": "t1",
        "turn-id": "12345",
        "cwd": "/home/dev/project",
        "input-messages": ["rename foo to bar"],
        "last-assistant-message": "Renamed.",
    }
    actions = codex.notify_actions(payload)
    assert [(a["action_type"], a["text"]) for a in actions] == [
        ("user_message", "rename foo to bar"),
        ("assistant_message", "Renamed."),
    ]
    assert codex.notify_actions(payload) == actions


def test_prompt_fallback_id_is_stable_and_turn_scoped() -> None:
    a = prompt_action("s1", {"prompt": "hello"})
    assert a is not None and a == prompt_action("s1", {"prompt": "hello"})
    assert a["action_id"] != prompt_action("s2", {"prompt": "hello"})["action_id"]  # type: ignore[index]
    other_turn = prompt_action("s1", {"prompt": "hello", "turn_id": "t2"})
    assert other_turn is not None and other_turn["action_id"] != a["action_id"]
    assert prompt_action("s1", {"prompt": "  "}) is None


def test_a_line_longer_than_the_read_window_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the skip the cursor never moves past such a line: capture stops."""
    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 1024)
    monkeypatch.setattr(transcript, "SKIP_STEP_BYTES", 7)  # the scan crosses many steps
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s1")
    t.user("before")
    start = t.path.stat().st_size
    t.user("x" * 3000)  # one line of over 3000 bytes
    after = t.path.stat().st_size
    t.user("after")
    actions, cursor, skipped, *_ = import_actions(t.path, 0, "s1")
    assert [a["text"] for a in actions] == ["before"] and skipped == 0
    assert cursor == start
    actions, cursor, skipped, *_ = import_actions(t.path, cursor, "s1")
    assert skipped == after - start
    assert [a["text"] for a in actions] == ["after"]
    assert cursor == t.path.stat().st_size


def test_an_over_long_line_still_being_written_holds_the_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 64)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"type": "user", "content": "' + b"x" * 500)  # no newline yet
    assert read_complete_lines(path, 0)[:3] == ([], 0, 0)
    with open(path, "ab") as fh:
        fh.write(b'"}\n{"a": 1}\n')
    lines, cursor, skipped, *_ = read_complete_lines(path, 0)
    assert lines == [(skipped, b'{"a": 1}\n')] and cursor == path.stat().st_size


def test_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lone = "\ud800"
    entries = [
        {"type": "user", "uuid": "u-1", "message": {"content": f"a{lone}b"}},
        {
            "type": "assistant",
            "uuid": "u-2",
            "message": {
                "content": [{"type": "tool_use", "id": f"t{lone}", "name": "R", "input": lone}]
            },
        },
        {
            "type": "user",
            "uuid": "u-3",
            "message": {
                "content": [{"type": "tool_result", "content": [{"type": "text", "text": lone}]}]
            },
        },
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))  # "\ud800" escapes
    actions, *_ = import_actions(path, 0, "s1")
    assert [a["action_id"] for a in actions] == ["u-1", "u-2", "u-3"]
    graph = SessionsGraph(db=str(tmp_path / "s.db"))
    assert graph.record_actions("s1", actions, user_id="alice") == 3  # storable
    stored = graph.get_actions("s1")
    assert stored[0].text == "a\ufffdb"
    assert stored[1].tool_use_id == "t\ufffd"


def test_the_hook_moves_the_import_cursor_through_the_facade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The façade validates the cursor; the engine's methods are not called directly."""
    from sessions_graph.engines.sqlite import SQLiteEngine
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.hooks.handle import handle_payload
    from sessions_graph.settings import Settings

    settings = Settings(db=str(tmp_path / "x.db"), state_dir=str(tmp_path / "state"))
    graph = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    calls: list[str] = []
    for name in ("import_cursor_state", "set_import_cursor"):
        original = getattr(graph, name)
        monkeypatch.setattr(
            graph, name, lambda *a, _o=original, _n=name: calls.append(_n) or _o(*a)
        )
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s1")
    t.user("hello")
    payload = json.loads(claude_payload("Stop", "s1", t.path))
    assert handle_payload(graph, settings, payload, "alice").added == 1
    assert calls == ["import_cursor_state", "set_import_cursor"]
    assert graph.import_cursor("s1", str(t.path)) == t.path.stat().st_size
    graph.close()


def test_an_over_long_line_is_one_warning_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sessions_graph.engines.sqlite import SQLiteEngine
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.hooks.handle import handle_payload
    from sessions_graph.settings import Settings

    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 1024)
    settings = Settings(db=str(tmp_path / "x.db"), state_dir=str(tmp_path / "state"))
    graph = SessionsGraph(engine=SQLiteEngine(settings.db), settings=settings)
    t = ClaudeTranscript(tmp_path / "s.jsonl", "s1")
    t.user("y" * 3000)
    t.user("short")
    payload = json.loads(claude_payload("Stop", "s1", t.path))
    outcome = handle_payload(graph, settings, payload, "alice")
    assert len(outcome.warnings) == 1 and "skipped a transcript line" in outcome.warnings[0]
    assert [a.text for a in graph.get_actions("s1")] == ["short"]
    assert handle_payload(graph, settings, payload, "alice").warnings == []  # reported once
    assert graph.get_session("s1").reconciliation_status == "pending"  # type: ignore[union-attr]
    graph.close()


def test_a_rewritten_prefix_is_noticed_by_its_fingerprint(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n')
    lines, cursor, _, known, reread = read_complete_lines(path, 0)
    assert (len(lines), cursor, reread) == (2, 18, False) and known
    path.write_text('{"a": 1}\n{"c": 333}\n{"b": 2}\n')  # longer, cursor now mid-line
    lines, cursor, _, known, reread = read_complete_lines(path, 18, known)
    assert reread and [line for _, line in lines][1] == b'{"c": 333}\n' and cursor == 29
    with open(path, "a") as fh:
        fh.write('{"d": 4}\n')
    lines, cursor, _, known, reread = read_complete_lines(path, cursor, known)
    assert not reread and [line for _, line in lines] == [b'{"d": 4}\n']


def test_a_cursor_without_fingerprint_must_stand_after_a_newline(tmp_path: Path) -> None:
    """Cursors stored before fingerprints existed are checked the one way left."""
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n')
    assert read_complete_lines(path, 9).reread is False
    path.write_text('{"a": 11}\n{"b": 2}\n')
    assert read_complete_lines(path, 9).reread is True


def test_an_over_long_line_ending_right_at_the_read_window_resumes_after_its_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The over-long line fills the read window exactly, so the next unread
    byte is its newline: the scan must stop there, not at the next line's
    end (which would drop that line, or hold the cursor for ever when it is
    the last one)."""
    monkeypatch.setattr(transcript, "MAX_READ_BYTES", 64)
    path = tmp_path / "s.jsonl"
    long_line = b'{"type": "user", "content": "' + b"x" * 33 + b'"}'
    assert len(long_line) == 64
    path.write_bytes(long_line + b'\n{"a": 1}\n')
    lines, cursor, skipped, *_ = read_complete_lines(path, 0)
    assert skipped == 65
    assert lines == [(65, b'{"a": 1}\n')] and cursor == path.stat().st_size


def test_tool_result_content_of_every_shape_becomes_text(tmp_path: Path) -> None:
    """Blocks of text are joined, an image is named, a missing content is
    empty, any other JSON value is kept as JSON, its words as written (an
    escaped "Z\\u00fcrich" would never match a search for Zürich)."""
    path = tmp_path / "s.jsonl"
    contents = [
        [{"type": "text", "text": "line one"}, {"type": "image", "source": {}}, "line two"],
        None,
        {"rows": 2, "city": "Zürich"},
    ]
    entries = [
        {
            "type": "user",
            "uuid": f"u-{n}",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t-{n}", "content": c}],
            },
        }
        for n, c in enumerate(contents)
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    actions, *_ = import_actions(path, 0, "s1")
    assert [a["text"] for a in actions] == [
        "line one\n[image]\nline two",
        "",
        '{"rows": 2, "city": "Zürich"}',
    ]


def test_a_codex_tool_output_is_an_error_only_when_it_says_so(tmp_path: Path) -> None:
    """Codex writes a tool's output as plain text, or as ``{content, success}``."""
    outputs = ["plain output", {"content": "failed run", "success": False}, {"content": "ok"}]
    lines = [
        {
            "timestamp": "2026-11-29T10:00:00.000Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": f"call_{n}", "output": out},
        }
        for n, out in enumerate(outputs)
    ]
    path = tmp_path / "rollout-2026-11-29T10-00-00-abc.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    actions, *_ = import_actions(path, 0, "cx1")
    assert [(a["text"], a["is_error"]) for a in actions] == [
        ("plain output", False),
        ("failed run", True),
        ("ok", False),
    ]


def test_a_missing_transcript_keeps_its_cursor_and_is_no_rewrite(tmp_path: Path) -> None:
    """Runtimes create the file lazily: nothing is read, skipped or reported."""
    missing = read_complete_lines(tmp_path / "later.jsonl", 120, "78-0badf00d")
    assert missing == ([], 120, 0, "78-0badf00d", False)


def test_an_empty_transcript_has_no_fingerprint(tmp_path: Path) -> None:
    """None stands for "nothing read yet" in the stored cursor (engines/base.py)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    assert read_complete_lines(path, 0) == ([], 0, 0, None, False)
    path.write_bytes(b'{"a": 1')  # a first line still being written
    assert read_complete_lines(path, 0) == ([], 0, 0, None, False)


def test_fingerprints_stored_by_earlier_versions_still_match(tmp_path: Path) -> None:
    """The fingerprint is stored with the cursor: computed any other way, every
    stored cursor would stop matching on upgrade, and every transcript be read
    again from its start. These values were stored by this format's first
    release: a long prefix (head and tail windows apart) and a short one."""
    path = tmp_path / "s.jsonl"
    lines = [(json.dumps({"n": n, "text": "x" * 90}) + "\n").encode() for n in range(100)]
    path.write_bytes(b"".join(lines))
    assert read_complete_lines(path, 0)[1:4] == (11190, 0, "2bb6-bc0607e3")
    path.write_bytes(lines[0])
    assert read_complete_lines(path, 0)[1:4] == (111, 0, "6f-58d893d5")
    with path.open("ab") as fh:
        fh.write(lines[1])
    again = read_complete_lines(path, 111, "6f-58d893d5")
    assert (again.lines, again.reread) == ([(111, lines[1])], False)


def test_one_call_reads_at_most_32_mib_and_the_rest_waits_for_the_next(tmp_path: Path) -> None:
    """The documented bound of one read: a line filling the window exactly is
    consumed whole, the line after it is left for the next call."""
    window = 32 * 1024 * 1024
    head = b'{"type": "user", "content": "'
    first = head + b"x" * (window - len(head) - 3) + b'"}\n'
    assert len(first) == window
    path = tmp_path / "s.jsonl"
    path.write_bytes(first + b'{"a": 1}\n')
    lines, cursor, skipped, *_ = read_complete_lines(path, 0)
    assert ([offset for offset, _ in lines], cursor, skipped) == ([0], window, 0)
    lines, cursor, *_ = read_complete_lines(path, cursor)
    assert lines == [(window, b'{"a": 1}\n')] and cursor == window + 9


def test_a_one_byte_transcript_is_not_taken_for_a_rewrite_on_the_next_read(
    tmp_path: Path,
) -> None:
    """A last line without its newline counts when it parses (here the bare
    value ``7``): the cursor after it carries a fingerprint like any other."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"7")
    first = read_complete_lines(path, 0)
    assert (first.lines, first.offset) == ([(0, b"7")], 1) and first.fingerprint
    again = read_complete_lines(path, first.offset, first.fingerprint)
    assert (again.lines, again.offset, again.reread) == ([], 1, False)


def test_blanks_after_the_last_newline_wait_like_any_unfinished_line(tmp_path: Path) -> None:
    """Only a last line that parses counts without its newline: blanks do not
    (the next write may continue them into an entry)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n  ')
    assert read_complete_lines(path, 0)[:3] == ([(0, b'{"a": 1}\n')], 9, 0)
