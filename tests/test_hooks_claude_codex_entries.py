"""One transcript line of Claude Code or Codex to the actions it records:
which blocks count, their ids (stored, so stable across versions), types,
texts, tool names and error flags."""

from __future__ import annotations

import json

from sessions_graph.hooks import claude, codex
from sessions_graph.hooks.transcript import line_actions


def _shown(actions: list[dict]) -> list[tuple]:
    return [
        (
            a["action_id"],
            a["action_type"],
            a["text"],
            a["tool_name"],
            a["tool_use_id"],
            a["is_error"],
        )
        for a in actions
    ]


def _line(entry: dict, session_id: str = "s1", offset: int = 0) -> list[tuple]:
    return _shown(line_actions(json.dumps(entry).encode(), offset, session_id))


# -- Claude Code ---------------------------------------------------------------------------
def test_an_assistant_entry_yields_its_text_and_tool_calls_by_block() -> None:
    entry = {
        "type": "assistant",
        "uuid": "u-1",
        "timestamp": "2026-11-29T10:00:00.000Z",
        "message": {
            "content": [
                {"type": "thinking", "thinking": "scratch"},  # the model's scratchpad
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t-1", "name": "Bash", "input": {"b": "é", "a": 1}},
                "a stray string",
                {"type": "text", "text": "   "},
                {"type": "image", "source": {}},
            ]
        },
    }
    assert _line(entry) == [
        ("u-1:1", "assistant_message", "Looking.", None, None, False),
        ("u-1:2", "tool_call", '{"a": 1, "b": "é"}', "Bash", "t-1", False),
    ]
    actions = line_actions(json.dumps(entry).encode(), 0, "s1")
    assert {a["timestamp"] for a in actions} == {"2026-11-29T10:00:00.000Z"}
    assert [a["origin"] for a in actions] == ["conversation", "conversation"]


def test_a_user_entry_is_a_prompt_and_a_tool_result_keeps_its_error_flag() -> None:
    prompt = {"type": "user", "uuid": "u-2", "message": {"content": "Fix the test"}}
    assert _line(prompt) == [("u-2", "user_message", "Fix the test", None, None, False)]
    blocks = [{"type": "text", "text": "a"}, {"type": "image"}, "b", {"type": "text", "text": 5}]
    result = {
        "type": "user",
        "uuid": "u-3",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "t-1", "content": blocks, "is_error": True},
                {"type": "tool_result", "tool_use_id": "t-2", "content": 42},
                {"type": "tool_result", "tool_use_id": "t-3"},
            ]
        },
    }
    assert _line(result) == [
        ("u-3", "tool_result", "a\n[image]\nb", None, "t-1", True),
        ("u-3:1", "tool_result", "42", None, "t-2", False),
        ("u-3:2", "tool_result", "", None, "t-3", False),
    ]


def test_what_the_runtime_injects_is_a_system_message() -> None:
    meta = {"type": "user", "uuid": "u-4", "isMeta": True, "message": {"content": "caveat"}}
    summary = {
        "type": "user",
        "uuid": "u-5",
        "isCompactSummary": True,
        "message": {"content": "summary"},
    }
    system = {"type": "system", "uuid": "u-6", "content": "Conversation compacted"}
    assert _line(meta) + _line(summary) + _line(system) == [
        ("u-4", "system_message", "caveat", None, None, False),
        ("u-5", "system_message", "summary", None, None, False),
        ("u-6", "system_message", "Conversation compacted", None, None, False),
    ]
    assert {a["origin"] for a in line_actions(json.dumps(system).encode(), 0, "s1")} == {"client"}


def test_entries_without_conversation_yield_nothing() -> None:
    for entry in [
        {"type": "summary", "uuid": "u-7", "summary": "x"},
        {"type": "user", "uuid": 7, "message": {"content": "no string uuid"}},
        {"type": "system", "uuid": "u-8", "content": "  "},
        {"type": "system", "uuid": "u-9", "content": ["not text"]},
        {"type": "system", "uuid": "not an id!", "content": "text"},
        {"type": "user", "uuid": "u-10", "message": {"content": {"not": "blocks"}}},
        {"type": "user", "uuid": "u-11", "message": "no content"},
    ]:
        assert _line(entry) == [], entry


def test_a_block_whose_id_would_be_too_long_is_skipped() -> None:
    """Ids are at most 128 characters: the entry's first block keeps the uuid,
    a later one would need ``:index`` more."""
    uuid = "u" * 127
    entry = {
        "type": "assistant",
        "uuid": uuid,
        "message": {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
    }
    assert [a[0] for a in _line(entry)] == [uuid]


def test_a_tool_name_or_id_over_512_characters_is_not_stored() -> None:
    entry = {
        "type": "assistant",
        "uuid": "u-12",
        "message": {
            "content": [
                {"type": "tool_use", "id": "i" * 512, "name": "n" * 512, "input": {}},
                {"type": "tool_use", "id": "i" * 513, "name": "n" * 513, "input": {}},
            ]
        },
    }
    assert [(a[3], a[4]) for a in _line(entry)] == [("n" * 512, "i" * 512), (None, None)]


def test_plain_text_of_content_blocks() -> None:
    assert claude.content_text(None) == ""
    assert claude.content_text({"city": "Zürich"}) == '{"city": "Zürich"}'
    assert (
        claude.content_text([{"type": "output_text", "text": "x"}, {"type": "input_text"}]) == "x"
    )


# -- Codex ---------------------------------------------------------------------------------
#: Ids of the rollout line at offset 0 of session "cx1", as stored since the
#: first release: a re-import after an upgrade must find the same ones.
CX = "cx-31f43d235e96a478be738dc80f0f8d94"


def _item(payload: dict, offset: int = 0) -> list[tuple]:
    envelope = {
        "timestamp": "2026-11-29T10:00:00.000Z",
        "type": "response_item",
        "payload": payload,
    }
    return _line(envelope, "cx1", offset)


def test_codex_ids_are_stable_hashes_of_session_and_offset() -> None:
    assert codex.line_id("cx1", 0) == CX
    assert codex.line_id("cx1", 0, 2) == f"{CX}:2"
    assert codex.line_id("cx1", 1) != CX and codex.line_id("cx2", 0) != CX


def test_a_codex_message_yields_one_action_per_text_block() -> None:
    user = {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "<environment_context>cwd</environment_context>"},
            {"type": "input_text", "text": "Fix it"},
            {"type": "input_text", "text": " "},
            "not a block",
        ],
    }
    assert _item(user) == [
        (CX, "system_message", "<environment_context>cwd</environment_context>", None, None, False),
        (f"{CX}:1", "user_message", "Fix it", None, None, False),
    ]
    assistant = {"type": "message", "role": "assistant", "content": "Done."}
    developer = {"type": "message", "role": "developer", "content": [{"text": "rules"}]}
    assert _item(assistant) + _item(developer) == [
        (CX, "assistant_message", "Done.", None, None, False),
        (CX, "system_message", "rules", None, None, False),
    ]
    assert _item({"type": "message", "role": "user", "content": 3}) == []


def test_codex_tool_calls_of_every_kind() -> None:
    calls = [
        {"type": "function_call", "name": "shell", "arguments": '{"cmd": "ls"}', "call_id": "c1"},
        {"type": "custom_tool_call", "name": "apply_patch", "input": {"é": 1}, "call_id": "c2"},
        {"type": "local_shell_call", "action": {"cmd": ["ls"]}, "id": "c3"},
        {"type": "web_search_call", "action": {"query": "q"}},
        {"type": "function_call", "name": "recall", "namespace": "mcp__sessions-graph"},
        {"type": "function_call", "name": "read", "namespace": "", "arguments": "{}"},
    ]
    assert [_item(c)[0][1:5] for c in calls] == [
        ("tool_call", '{"cmd": "ls"}', "shell", "c1"),
        ("tool_call", '{"é": 1}', "apply_patch", "c2"),
        ("tool_call", '{"cmd": ["ls"]}', "local_shell", "c3"),
        ("tool_call", '{"query": "q"}', "web_search", None),
        ("tool_call", "null", "mcp__sessions-graph__recall", None),
        ("tool_call", "{}", "read", None),
    ]


def test_codex_tool_results_are_errors_only_when_they_say_so() -> None:
    outputs = [
        "plain",
        {"content": "failed", "success": False},
        {"content": [{"type": "input_text", "text": "ok"}], "success": True},
    ]
    results = [
        _item({"type": "function_call_output", "call_id": f"c{n}", "output": out})[0][2:]
        for n, out in enumerate(outputs)
    ]
    assert results == [
        ("plain", None, "c0", False),
        ("failed", None, "c1", True),
        ("ok", None, "c2", False),
    ]


def test_codex_lines_without_conversation_yield_nothing() -> None:
    assert _line({"type": "event_msg", "payload": {"type": "user_message", "message": "x"}}) == []
    assert _line({"type": "response_item", "payload": "not an item"}) == []
    assert _item({"type": "reasoning", "encrypted_content": "..."}) == []


def test_a_legacy_bare_codex_item_is_read_like_an_enveloped_one() -> None:
    bare = {"type": "message", "role": "user", "content": "hi"}
    assert _line(bare, "cx1") == [(CX, "user_message", "hi", None, None, False)]


def test_a_notify_turn_records_its_inputs_and_answer() -> None:
    payload = {
        "type": "agent-turn-complete",
        "thread-id": "th-1",
        "turn-id": "tu-1",
        "input-messages": ["first", " ", 5, "second"],
        "last-assistant-message": "answer",
    }
    actions = codex.notify_actions(payload)
    key = actions[0]["action_id"].split(":")[0]
    assert [(a["action_id"], a["action_type"], a["text"]) for a in actions] == [
        (f"{key}:0", "user_message", "first"),
        (f"{key}:3", "user_message", "second"),
        (f"{key}:out", "assistant_message", "answer"),
    ]
    assert key == "cxn-e7874a2ed68c248dd58b46569bac9711"
    assert codex.notify_actions({**payload, "last-assistant-message": None})[-1]["text"] == "second"
    assert codex.notify_actions({**payload, "turn-id": None}) == []
    assert codex.notify_actions({**payload, "thread-id": 1}) == []
