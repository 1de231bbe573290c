"""Timestamps that are ISO 8601 but have no UTC equivalent a computer can hold
(year 1 ahead of UTC, year 9999 behind it): real hook, import, recall and MCP
processes.

An event's timestamp that cannot be read counts as missing (the Action is
dated by its Session); a time the user asks for (``--since``) is a one-line
error.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_process import CLI, run
from mcp import Client, StdioServerParameters
from test_hooks_helpers import ClaudeTranscript, claude_payload

from sessions_graph import SessionsGraph
from sessions_graph.settings import load_settings

OUT_OF_RANGE = ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"]


def env() -> dict[str, str]:
    return dict(os.environ)  # the autouse fixture isolated it; ``db`` points it at a store


@pytest.mark.parametrize("stamp", OUT_OF_RANGE)
def test_a_hook_event_with_an_out_of_range_time_is_recorded(
    tmp_path: Path, db: Path, stamp: str
) -> None:
    transcript = ClaudeTranscript(tmp_path / "t.jsonl", "sess-t")
    transcript.user("build the parser")
    entry = transcript.user("which year is this?")
    text = transcript.path.read_text().replace(entry["timestamp"], stamp)
    transcript.path.write_text(text)
    first = run(env(), "hook", stdin=claude_payload("Stop", "sess-t", transcript.path))
    transcript.assistant("the parser is built")
    later = run(env(), "hook", stdin=claude_payload("Stop", "sess-t", transcript.path))
    for result in (first, later):
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    with SessionsGraph(db=str(db)) as graph:
        actions = graph.get_actions("sess-t")
        session = graph.get_session("sess-t")
    assert [a.text for a in actions] == [
        "build the parser",
        "which year is this?",
        "the parser is built",
    ]
    # The unreadable time counts as missing; its neighbours keep theirs.
    assert [a.timestamp is None for a in actions] == [False, True, False]
    assert session is not None and session.started_at.startswith("2026-11-29T10:00:01")
    assert not list((load_settings().spool_dir / "rejected").glob("*.json"))


def test_import_of_a_folder_with_an_out_of_range_time_imports_every_file(
    tmp_path: Path, db: Path
) -> None:
    folder = tmp_path / "projects" / "-home-dev-project"
    sids = [f"0000000{n}-7a4b-4c1d-9e8f-2b6a0d4c7e11" for n in range(3)]
    for n, sid in enumerate(sids):
        t = ClaudeTranscript(folder / f"{sid}.jsonl", sid)
        t.user(f"question {n}")
        t.assistant(f"answer {n}")
    middle = folder / f"{sids[1]}.jsonl"
    middle.write_text(middle.read_text().replace("2026-11-29T10:00:01.000Z", OUT_OF_RANGE[0]))
    result = run(env(), "import", str(folder))
    assert result.returncode == 0, result.stderr
    with SessionsGraph(db=str(db)) as graph:
        counts = [len(graph.get_actions(sid)) for sid in sids]
        middle_session = graph.get_session(sids[1])
    assert counts == [2, 2, 2]
    # Dated by its first readable time, not by the one it could not read.
    assert middle_session is not None
    assert middle_session.started_at.startswith("2026-11-29T10:00:02")


@pytest.mark.parametrize("stamp", OUT_OF_RANGE)
def test_recall_since_an_out_of_range_time_is_one_line(db: Path, stamp: str) -> None:
    result = run(env(), "recall", "parser", "--since", stamp)
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: since must be"), result.stderr
    assert stamp in lines[0]


def test_mcp_time_arguments_out_of_range_are_tool_errors(tmp_path: Path, db: Path) -> None:
    with SessionsGraph(db=str(db)) as graph:
        graph.setup()
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env=env())

    async def main() -> list[Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return [
                await client.call_tool("recall", {"query": "parser", "since": OUT_OF_RANGE[0]}),
                await client.call_tool("list_sessions", {"until": OUT_OF_RANGE[1]}),
                await client.call_tool("list_sessions", {}),
            ]

    *errors, after = asyncio.run(main())
    for result, name in zip(errors, ("since", "until"), strict=True):
        message = "".join(block.text for block in result.content)
        assert result.is_error and f"{name} must be" in message, message
        assert "\n" not in message
    assert not after.is_error and json.loads(after.content[0].text) == []
