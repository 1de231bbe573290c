"""A transcript rewritten under its cursor is read again from the start, so
no line is lost: a change in its first or its last 4 KB before the cursor,
in a transcript much longer than both, is noticed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessions_graph.hooks.transcript import read_complete_lines


def lines(count: int, tag: str) -> list[bytes]:
    """JSON lines of about 500 bytes each."""
    return [
        (json.dumps({"n": n, "text": f"{tag} {n} " + "x" * 480}) + "\n").encode()
        for n in range(count)
    ]


@pytest.mark.parametrize("changed", [0, 1, 38, 39], ids=["first", "second", "before-last", "last"])
def test_a_rewritten_line_near_either_end_is_read_again(tmp_path: Path, changed: int) -> None:
    path = tmp_path / "t.jsonl"
    original = lines(40, "old")  # ~20 KB: head and tail windows far apart
    path.write_bytes(b"".join(original))
    first = read_complete_lines(path, 0)
    assert len(first.lines) == 40 and first.offset == path.stat().st_size

    rewritten = list(original)
    rewritten[changed] = original[changed].replace(b"old", b"new")  # same length
    path.write_bytes(b"".join(rewritten) + b"".join(lines(1, "appended")))

    again = read_complete_lines(path, first.offset, first.fingerprint)
    assert again.reread
    assert [line for _, line in again.lines][changed] == rewritten[changed]
    assert len(again.lines) == 41


def test_an_untouched_prefix_is_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(lines(40, "old")))
    first = read_complete_lines(path, 0)
    with path.open("ab") as fh:
        fh.write(lines(1, "appended")[0])
    again = read_complete_lines(path, first.offset, first.fingerprint)
    assert not again.reread and len(again.lines) == 1
