"""Reconciliation with the local extractor (no LLM), on every engine: the same
graph as the LLM path, dedup, re-reconcile, forget, and an LLM pass after it."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from reconcile_scripted import ScriptedLLM, record

from sessions_graph import SessionsGraph
from sessions_graph.reconcile.chunking import OfflineTokenizer, prepare_unit

DEBUG = [
    "The retries in src/notify/sender.py give up too early; can we use tenacity?",
    json.dumps({"command": "pip install tenacity==8.2.3 && pytest tests/test_sender.py -q"}),
    "Traceback (most recent call last):\n"
    '  File "/app/src/notify/sender.py", line 42, in send\n'
    "    resp = session.post(url, timeout=5)\n"
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='api.mailer.io', port=443)",
    "Fixed: `send_with_retry` now wraps the call with tenacity;"
    " see https://tenacity.readthedocs.io/en/latest/ and PR #214.",
]


def typed(graph: SessionsGraph, session_id: str) -> dict[str, str | None]:
    return {e.name: e.entity_type for e in graph.session_entities(session_id)}


def test_without_an_llm_the_local_extractor_runs(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", *DEBUG)

    summary = graph.reconcile_session_sync("s-1")

    assert summary.status == "reconciled" and summary.extractor == "local"
    assert summary.llm_calls == summary.chars_sent == 0
    assert summary.chunks_extracted == 4 and summary.entities > 0 and summary.relations > 0
    found = typed(graph, "s-1")
    expected = {
        "src/notify/sender.py": "file",
        "sender.py": "file",
        "tests/test_sender.py": "file",
        "tenacity": "package",
        "tenacity 8.2.3": "version",
        "pip": "tool",
        "pytest": "tool",
        "ReadTimeout": "error",
        "api.mailer.io": "host",
        "https://tenacity.readthedocs.io/en/latest/": "url",
        "send_with_retry": "identifier",
        "#214": "issue",
    }
    assert {k: found.get(k) for k in expected} == expected
    assert [s.session_id for s in graph.entity_sessions("sender.py", user_id="alice")] == ["s-1"]
    assert graph.entity_sessions("sender.py", user_id="bob") == []
    stored = graph.get_session("s-1")
    assert stored is not None and stored.last_summary["extractor"] == "local"


def test_local_extraction_is_deduped_by_hash_and_incremental(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", DEBUG[0], DEBUG[1])
    record(graph, "s-2", "bob", DEBUG[0], "Bob ran `kubectl rollout restart deploy/mailer`.")

    first = asyncio.run(graph.reconcile_pending())
    again = graph.reconcile_session_sync("s-1")

    assert [s.extractor for s in first] == ["local", "local"]
    assert sum(s.chunks_extracted for s in first) == 3  # the shared chunk once
    assert again.chunks_extracted == 0 and again.texts_deduped == 2
    graph.record_actions(
        "s-1", [{"action_id": "late", "action_type": "user_message", "text": "Now bump httpx."}]
    )
    [late] = asyncio.run(graph.reconcile_pending())
    assert late.session_id == "s-1" and late.chunks_extracted == 1
    assert {"sender.py", "kubectl"} <= set(typed(graph, "s-2"))
    sessions = {s.session_id for s in graph.entity_sessions("sender.py", user_id="bob")}
    assert sessions == {"s-2"}


def test_forget_removes_what_only_the_session_named(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", DEBUG[0], "Only here: `frobnicate_widgets` in lib/widgets.rs")
    record(graph, "s-2", "alice", DEBUG[0])
    asyncio.run(graph.reconcile_pending())

    graph.forget_session("s-1")

    assert graph.entity_sessions("widgets.rs", user_id="alice") == []
    assert graph.entity_sessions("frobnicate_widgets", user_id="alice") == []
    assert [s.session_id for s in graph.entity_sessions("sender.py", user_id="alice")] == ["s-2"]


def test_an_llm_pass_after_the_local_one_adds_and_loses_nothing(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", *DEBUG)
    graph.reconcile_session_sync("s-1", extractor="local")
    local = typed(graph, "s-1")
    counts = {e.name: e.mentions for e in graph.session_entities("s-1")}
    llm = ScriptedLLM()

    upgraded = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")
    after = graph.session_entities("s-1")

    assert upgraded.extractor == "llm" and upgraded.chunks_extracted == 4 and llm.calls == 4
    names = {e.name for e in after}
    assert set(local) <= names  # nothing the local extractor found is lost
    assert {"Traceback", "Fixed", "HTTPSConnectionPool"} <= names  # the LLM's are added
    folded = [e.name.casefold() for e in after]
    assert len(folded) == len(set(folded))  # and nothing is doubled
    assert {e.name: e.mentions for e in after if e.name in counts} == counts
    # Both marks are there now: neither extractor does these chunks again.
    assert graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm").llm_calls == 0
    assert graph.reconcile_session_sync("s-1", extractor="local").chunks_extracted == 0
    assert typed(graph, "s-1") == {e.name: e.entity_type for e in after}


def test_a_short_chunk_keeps_its_local_findings_without_an_llm_call(
    graph: SessionsGraph,
) -> None:
    record(graph, "s-1", "alice", "git status", DEBUG[0])
    graph.reconcile_session_sync("s-1", extractor="local")
    assert typed(graph, "s-1")["git"] == "tool"
    llm = ScriptedLLM()

    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")

    assert llm.inputs == [DEBUG[0]] and summary.texts_considered == 2
    assert typed(graph, "s-1")["git"] == "tool"


def test_the_local_extractor_leaves_what_the_llm_extracted(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", *DEBUG)
    graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM(), extractor="llm")
    before = typed(graph, "s-1")

    local = graph.reconcile_session_sync("s-1", extractor="local")

    assert local.chunks_extracted == 0 and local.texts_deduped == 4
    assert typed(graph, "s-1") == before


def test_a_chunk_claimed_by_one_extractor_is_not_claimed_by_the_other(
    graph: SessionsGraph,
) -> None:
    record(graph, "s-1", "alice", DEBUG[0])
    [chunk] = prepare_unit(DEBUG[0], OfflineTokenizer()).chunks
    graph.reconcile_session_sync("s-1", extractor="local")  # chunks stored, marked local
    engine = graph.engine

    [todo] = engine.unextracted_chunks("s-1", "base", ("llm",))
    assert todo["hash"] == chunk.hash and todo["extracted_by"] == ["local"]
    assert engine.unextracted_chunks("s-1", "base", ("llm", "local")) == []
    assert engine.claim_chunks([chunk.hash], "base", "local-run", 60, ("llm", "local")) == set()
    assert engine.claim_chunks([chunk.hash], "base", "llm-run", 60, ("llm",)) == {chunk.hash}
    assert engine.claim_chunks([chunk.hash], "base", "other-llm-run", 60, ("llm",)) == set()
    engine.save_extraction(chunk.hash, "base", [{"name": "Orion"}], [], "llm")
    assert engine.unextracted_chunks("s-1", "base", ("llm",)) == []
    assert engine.unextracted_chunks("s-1", "spare", ("llm",))[0]["extracted_by"] == []


def test_an_explicit_extractor_wins_over_a_configured_llm(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", DEBUG[0])
    llm = ScriptedLLM()

    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="local")

    assert summary.extractor == "local" and llm.calls == 0
    with pytest.raises(Exception, match="extractor must be one of"):
        graph.reconcile_session_sync("s-1", extractor="spacy")


def test_no_secret_becomes_an_entity(graph: SessionsGraph) -> None:
    secrets = [
        "sk-proj-Abcdefghijklmnopqrstuvwxyz012345",
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "hunter2hunter2",
        "xoxb-123456789012-abcdefghijkl",
        "s3cr3t-Pa55w0rd",
    ]
    text = (
        "$ cat .env\nOPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwxyz012345\n"
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        "GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        "SLACK_BOT_TOKEN=xoxb-123456789012-abcdefghijkl\n"
        "DATABASE_URL=postgres://app:hunter2hunter2@db.internal:5432/app?password=s3cr3t-Pa55w0rd\n"
        "$ export DB_PASSWORD=s3cr3t-Pa55w0rd"
        " && ./deploy.sh --token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    )
    record(graph, "s-1", "alice", text)

    graph.reconcile_session_sync("s-1")
    found = graph.session_entities("s-1")

    names = {e.name for e in found}
    assert {"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "db.internal"} <= names
    for entity in found:
        for secret in secrets:
            assert secret not in entity.name and secret not in (entity.description or "")
        assert "REDACTED" not in entity.name


def test_named_entities_come_from_the_optional_model(graph: SessionsGraph) -> None:
    pytest.importorskip("spacy")
    from sessions_graph.reconcile.local import ner

    if ner.load_model(quiet=True) is None:
        pytest.skip("the named-entity model is not installed")
    record(
        graph,
        "s-1",
        "alice",
        "Priya Raman from Acme Logistics asked us to move the billing cron to Frankfurt"
        " before the audit, and Tom Becker agreed.",
    )

    graph.reconcile_session_sync("s-1")

    found = typed(graph, "s-1")
    assert found.get("Priya Raman") == "person" and found.get("Tom Becker") == "person"
    assert found.get("Acme Logistics") == "organization"
    assert found.get("Frankfurt") == "location"


def test_the_setting_chooses_and_the_option_overrides_it() -> None:
    from sessions_graph.reconcile.pipeline import RunOptions, choose_extractor
    from sessions_graph.settings import Settings

    llm = ScriptedLLM()
    assert choose_extractor(Settings(), RunOptions()) == "local"
    assert choose_extractor(Settings(), RunOptions(), llm) == "llm"
    assert choose_extractor(Settings(openai_api_key="sk-x"), RunOptions()) == "llm"
    assert choose_extractor(Settings(extractor="local"), RunOptions(), llm) == "local"
    assert choose_extractor(Settings(extractor="local"), RunOptions(extractor="llm")) == "llm"
    assert choose_extractor(Settings(extractor="llm"), RunOptions(extractor="auto")) == "local"


def test_deeply_nested_json_is_reconciled(graph: SessionsGraph) -> None:
    """A tool's JSON nested deeper than the interpreter's recursion limit is
    read as text: the session is reconciled, on the first run, instead of
    failing on every rerun."""
    nested = '{"command": "pip install tenacity", "a": ' + "[" * 1500 + "]" * 1500 + "}"
    shallow = json.dumps({"command": "pytest tests/test_sender.py", "a": [[["x"]]]})
    record(graph, "s-1", "alice", nested, shallow)

    summary = graph.reconcile_session_sync("s-1")

    assert summary.status == "reconciled", summary
    found = typed(graph, "s-1")
    assert found.get("tenacity") == "package" and found.get("tests/test_sender.py") == "file"


def test_merging_the_llms_findings_into_the_local_ones() -> None:
    """What an LLM pass over a chunk the local extractor did saves: a name
    both found once (the local spelling and type, the LLM's description when
    it gives one), a pair both related once (the LLM's words, the larger
    weight), nothing relating a name to itself."""
    from sessions_graph.reconcile.extraction import Extraction
    from sessions_graph.reconcile.pipeline import merge_extractions

    local = Extraction(
        entities=[
            {"name": "sender.py", "entity_type": "file", "description": "named as a path"},
            {"name": "tenacity", "entity_type": "package", "description": "named as a package"},
            {"name": "pytest", "entity_type": "tool", "description": "named as a command"},
        ],
        relations=[
            {
                "source": "sender.py",
                "target": "tenacity",
                "description": "together",
                "keywords": "cooccurrence",
                "weight": 3.0,
            },
            {
                "source": "tenacity",
                "target": "pytest",
                "description": "together",
                "keywords": "cooccurrence",
                "weight": 1.0,
            },
        ],
    )
    llm = Extraction(
        entities=[
            {"name": "Tenacity", "entity_type": "library", "description": "A retry library."},
            {"name": "Sender.py", "entity_type": "unknown", "description": ""},  # a relation end
            {"name": "PyTest", "entity_type": "software", "description": "A test runner."},
            {"name": "Mailer", "entity_type": "service", "description": "The mail API."},
        ],
        relations=[
            {
                "source": "Tenacity",
                "target": "Sender.py",
                "description": "wraps the call",
                "keywords": "retry",
                "weight": 1.0,
            },
            {
                "source": "PyTest",
                "target": "Tenacity",
                "description": "tests it",
                "keywords": "test",
                "weight": 2.0,
            },
            {
                "source": "PyTest",
                "target": "pytest",
                "description": "itself",
                "keywords": "same",
                "weight": 1.0,
            },
            {
                "source": "Mailer",
                "target": "PyTest",
                "description": "tested by",
                "keywords": "test",
                "weight": 1.0,
            },
        ],
    )

    entities, relations = merge_extractions(local, llm)

    assert entities == [
        {"name": "sender.py", "entity_type": "file", "description": "named as a path"},
        {"name": "tenacity", "entity_type": "package", "description": "A retry library."},
        {"name": "pytest", "entity_type": "tool", "description": "A test runner."},
        {"name": "Mailer", "entity_type": "service", "description": "The mail API."},
    ]
    assert relations == [
        {
            "source": "sender.py",
            "target": "tenacity",
            "description": "wraps the call",
            "keywords": "retry",
            "weight": 3.0,
        },
        {
            "source": "tenacity",
            "target": "pytest",
            "description": "tests it",
            "keywords": "test",
            "weight": 2.0,
        },
        {
            "source": "Mailer",
            "target": "pytest",
            "description": "tested by",
            "keywords": "test",
            "weight": 1.0,
        },
    ]


def test_an_llm_run_saves_only_the_llms_findings(graph: SessionsGraph) -> None:
    """The local extractor's findings join the LLM's only on chunks it did."""
    record(graph, "s-1", "alice", DEBUG[0])
    graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM(), extractor="llm")
    assert typed(graph, "s-1") == {"The": "concept"}  # the scripted model's one name


def test_an_llm_pass_over_local_findings_prints_no_model_hint(
    graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the named-entity model, the local extractor says once how to
    get it; the LLM pass that keeps its findings says nothing."""
    from sessions_graph.reconcile.local import ner

    for name in ner.MODEL_PACKAGES:
        monkeypatch.setitem(sys.modules, name, None)  # as when not installed
    monkeypatch.setattr(ner, "_model", None)
    monkeypatch.setattr(ner, "_tried", False)
    record(graph, "s-1", "alice", DEBUG[0])
    graph.reconcile_session_sync("s-1", extractor="local")
    assert "sessions-graph:" in capsys.readouterr().err

    monkeypatch.setattr(ner, "_tried", False)  # a new process: the model looked for again
    summary = graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM(), extractor="llm")

    assert summary.status == "reconciled" and summary.chunks_extracted == 1
    assert capsys.readouterr().err == ""
