"""The injected context of later sessions, on real transcripts of both
clients (``bench/data/inject/``): no derived or client context, nothing
shown twice, no other project's item without its label, and the decisions
planted earlier in the project reach the model.

A slice of ``bench/bench_inject.py``: the corpus is imported by the real
``sessions-graph import`` and the later sessions of the two projects called
``api`` are played by real ``sessions-graph hook`` processes (SessionStart,
each prompt, SessionEnd); the blocks measured are what those processes
printed. The token goals are the bench's to report, not asserted here.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_inject  # noqa: E402

#: The later sessions in w1/clientA/api (Claude Code) and w2/clientB/api (Codex).
API_PROBES = [0, 1]


def test_later_sessions_get_clean_labelled_context_with_their_decisions() -> None:
    measures, runs = bench_inject.run(REPO, probes=API_PROBES)
    blocks = [b for _probe, _session, bs in runs for b in bs if b.context]
    assert blocks, "no hook injected anything"
    examples = measures["examples"]
    assert measures["noise"] == 0, examples["noise"]
    assert measures["repeats_in_session"] == 0, examples["repeats"]
    assert measures["duplicates_in_block"] == 0, examples["duplicates"]
    assert measures["ledger_repeats"] == 0
    assert measures["leaks"] == 0, examples["leaks"]
    assert measures["decision_recall"] == 1.0, measures["decisions_missed"]


def test_a_request_said_in_both_projects_is_shown_as_this_projects() -> None:
    """Both api projects started with the very same request; recall shows
    identical texts as one hit, which may be the other project's session.
    In either project it is shown as its own session's, unlabelled."""
    shared = bench_inject.norm("Add a background job queue to the api and run the tests.")
    manifest = bench_inject.load_manifest()
    project_of = {s["session_id"]: s["project"] for s in manifest["sessions"]}
    _measures, runs = bench_inject.run(REPO, probes=API_PROBES)
    shown = [
        (probe["project"], item)
        for probe, _session, blocks in runs
        for block in blocks
        for item in block.items
        if shared in item.segments
    ]
    assert {project for project, _ in shown} == {"clientA-api", "clientB-api"}, shown
    for project, item in shown:
        assert project_of[item.session_id] == project and not item.labelled, item.line
