"""Reconciliation behaviour, on every engine, with a scripted LightRAG-format LLM."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from reconcile_scripted import ScriptedLLM, input_text, record

from sessions_graph import SessionsGraph
from sessions_graph.engines.base import action_key
from sessions_graph.errors import MemoryValidationError, ReconciliationNotConfiguredError
from sessions_graph.reconcile import pipeline
from sessions_graph.reconcile.chunking import OfflineTokenizer, prepare_unit
from sessions_graph.reconcile.summary import ReconciliationSummary

SHARED = "Shared note: the Falcon cluster runs Memgraph behind Traefik."
#: What a summary counts.
COUNTS = (
    "units",
    "texts_considered",
    "texts_deduped",
    "chunks_extracted",
    "entities",
    "relations",
    "entities_linked",
    "llm_calls",
    "chars_sent",
)


def names(graph: SessionsGraph, session_id: str) -> set[str]:
    return {e.name for e in graph.session_entities(session_id)}


def test_reconcile_session_extracts_and_links(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice deployed Memgraph on Kubernetes.", "Helm chart applied.")
    graph.save_memory("alice", "Alice prefers Grafana dashboards.", session_id="s-1")
    llm = ScriptedLLM()

    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm)

    assert summary.status == "reconciled"
    assert (summary.units, summary.texts_considered, summary.chunks_extracted) == (3, 3, 3)
    assert summary.llm_calls == llm.calls == 3
    assert summary.chars_sent == sum(len(p) for p in llm.prompts) - 3  # the joining newlines
    assert summary.entities == 6 and summary.relations == 3
    assert {"Alice", "Memgraph", "Kubernetes", "Helm", "Grafana"} <= names(graph, "s-1")
    session = graph.get_session("s-1")
    assert session is not None and session.reconciliation_status == "reconciled"
    assert session.reconciled_at and session.last_summary["llm_calls"] == 3
    assert [s.session_id for s in graph.entity_sessions("memgraph", user_id="alice")] == ["s-1"]
    assert graph.entity_sessions("Memgraph", user_id="bob") == []


def test_units_are_prepared_off_the_event_loop(
    graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redaction and chunking run in a worker thread, so a long unit cannot
    stall lease renewals or the other sessions of a sweep."""
    import threading

    threads: list[threading.Thread] = []
    real = pipeline.prepare_unit

    def recording(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "prepare_unit", recording)
    record(graph, "s-1", "alice", "Alice deployed Memgraph on Kubernetes.")
    summary = graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())
    assert summary.status == "reconciled"
    assert threads and all(t is not threading.main_thread() for t in threads)


def test_reconciled_content_is_never_sent_again(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice deployed Memgraph on Kubernetes.")
    llm = ScriptedLLM()
    graph.reconcile_session_sync("s-1", llm_model_func=llm)

    again = graph.reconcile_session_sync("s-1", llm_model_func=llm)
    sweep = asyncio.run(graph.reconcile_pending(llm_model_func=llm))

    assert llm.calls == 1
    assert again.status == "reconciled" and again.llm_calls == 0
    assert again.texts_deduped == again.texts_considered == 1
    assert sweep == []


def test_sweep_dedups_shared_chunks_in_flight(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", SHARED, "Alice owns Falcon.")
    record(graph, "s-2", "bob", SHARED, "Bob restarted Traefik.")
    record(graph, "s-3", "bob", SHARED)
    llm = ScriptedLLM(delay=0.05)  # slow enough for the sessions to overlap

    summaries = asyncio.run(graph.reconcile_pending(llm_model_func=llm, concurrency=8))

    assert [s.status for s in summaries] == ["reconciled"] * 3
    assert sorted(llm.inputs) == sorted([SHARED, "Alice owns Falcon.", "Bob restarted Traefik."])
    assert sum(s.llm_calls for s in summaries) == 3
    assert sum(s.texts_deduped for s in summaries) == 2
    assert "Traefik" in names(graph, "s-3")
    assert [s.session_id for s in graph.entity_sessions("traefik", user_id="bob")] == [
        "s-3",
        "s-2",
    ]


def test_new_content_queues_the_session_and_only_it_is_extracted(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice deployed Memgraph.")
    llm = ScriptedLLM()
    graph.reconcile_session_sync("s-1", llm_model_func=llm)

    graph.record_actions(
        "s-1", [{"action_id": "late", "action_type": "user_message", "text": "Now try Neo4j."}]
    )
    assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]
    [summary] = asyncio.run(graph.reconcile_pending(llm_model_func=llm))

    assert llm.inputs == ["Alice deployed Memgraph.", "Now try Neo4j."]
    assert summary.status == "reconciled" and summary.chunks_extracted == 1
    assert {"Alice", "Memgraph", "Now"} <= names(graph, "s-1")


def test_changed_memory_is_relinked_and_orphans_collected(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")
    memory = graph.save_memory("alice", "Deadline is Friday for Orion.", session_id="s-1")
    llm = ScriptedLLM()
    graph.reconcile_session_sync("s-1", llm_model_func=llm)
    assert {"Orion", "Friday"} <= names(graph, "s-1")

    graph.update_memory(memory.memory_id, "Deadline moved for Pegasus.")
    [summary] = asyncio.run(graph.reconcile_pending(llm_model_func=llm))

    assert summary.chunks_extracted == 1 and llm.inputs[-1] == "Deadline moved for Pegasus."
    found = names(graph, "s-1")
    assert "Pegasus" in found and "Orion" not in found and "Friday" not in found
    assert graph.entity_sessions("Orion", user_id="alice") == []
    # The collected entity really is gone: a fresh session naming it is extracted anew.
    record(graph, "s-2", "alice", "Deadline is Friday for Orion.")
    graph.reconcile_session_sync("s-2", llm_model_func=llm)
    assert llm.inputs[-1] == "Deadline is Friday for Orion."


def test_deleted_memory_unlinks_its_entities(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")
    memory = graph.save_memory("alice", "Remember Zanzibar.", session_id="s-1")
    graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())

    graph.delete_memory(memory.memory_id)

    assert "Zanzibar" not in names(graph, "s-1")
    assert graph.entity_sessions("Zanzibar", user_id="alice") == []


def test_failure_is_recorded_and_keeps_the_last_summary(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")
    graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())
    good = graph.get_session("s-1").last_summary  # type: ignore[union-attr]
    graph.record_actions(
        "s-1", [{"action_id": "bad", "action_type": "tool_result", "text": "Poison pill text."}]
    )

    refusing = ScriptedLLM(fail_on="Poison")
    failed = graph.reconcile_session_sync("s-1", llm_model_func=refusing)

    assert failed.status == "failed" and "refuses" in (failed.error or "")
    # What was sent counts, even when it failed.
    assert failed.llm_calls == refusing.calls == 1 and failed.chars_sent > 0
    session = graph.get_session("s-1")
    assert session is not None and session.reconciliation_status == "failed"
    assert "refuses" in (session.reconciliation_error or "")
    assert session.last_summary == good
    assert asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM())) == []

    llm = ScriptedLLM()
    [retried] = asyncio.run(graph.reconcile_pending(retry_failed=True, llm_model_func=llm))
    assert retried.status == "reconciled" and llm.inputs == ["Poison pill text."]
    assert graph.get_session("s-1").reconciliation_error is None  # type: ignore[union-attr]


def test_concurrent_sweeps_never_share_a_session(graph: SessionsGraph) -> None:
    for i in range(6):
        record(graph, f"s-{i}", "alice", f"Session {i} mentions Comet{i}.")
    llm = ScriptedLLM(delay=0.02)

    async def two_sweeps() -> tuple[list[str], list[str]]:
        a, b = await asyncio.gather(
            graph.reconcile_pending(limit=4, llm_model_func=llm),
            graph.reconcile_pending(limit=4, llm_model_func=llm),
        )
        return [s.session_id for s in a], [s.session_id for s in b]

    first, second = asyncio.run(two_sweeps())

    assert not set(first) & set(second)
    assert sorted(first + second) == [f"s-{i}" for i in range(6)]
    assert llm.calls == 6


def test_a_session_a_live_run_holds_is_left_alone(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")
    assert graph.engine.claim_sessions("other-run", 60.0, 10)
    llm = ScriptedLLM()

    busy = graph.reconcile_session_sync("s-1", llm_model_func=llm)

    assert busy.status == "busy" and busy.error == "another reconciliation run holds this session"
    # Nothing was done, so nothing is counted.
    assert {k: getattr(busy, k) for k in COUNTS} == dict.fromkeys(COUNTS, 0)
    assert llm.calls == 0 and busy.digest is None


def test_expired_claim_is_taken_over(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")
    import lightrag.operate  # noqa: F401  # loaded first: its import alone may outlast the lease

    # A run that claimed the session and died: its lease runs out.
    assert graph.engine.claim_sessions("dead-run", 0.5, 10)
    started = time.monotonic()
    assert asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM())) == []
    busy = graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())
    assert busy.status == "busy"

    time.sleep(max(0.0, 0.6 - (time.monotonic() - started)))
    [summary] = asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))
    assert summary.status == "reconciled"
    assert not graph.engine.finish_reconciliation("s-1", "dead-run", "reconciled", "x", None, None)


def claimed_elsewhere(graph: SessionsGraph, action_id: str, text: str, lease: float) -> str:
    """Chunk the action as a run would, and claim its chunk for another
    process's run ("other-run"); return the chunk hash."""
    prepared = prepare_unit(text, OfflineTokenizer())
    [chunk] = prepared.chunks
    graph.engine.set_unit_chunks(
        "action",
        action_key("alice", action_id),
        prepared.content_hash,
        [{"hash": chunk.hash, "text": chunk.text}],
    )
    assert graph.engine.claim_chunks([chunk.hash], "base", "other-run", lease) == {chunk.hash}
    return chunk.hash


def test_a_chunk_another_run_holds_is_waited_for_not_sent(
    graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_POLL_SECONDS", 0.05)
    record(graph, "s-1", "alice", SHARED, "Alice owns Falcon.")
    shared = claimed_elsewhere(graph, "s-1-a0", SHARED, lease=60.0)
    llm = ScriptedLLM()

    async def other_run_saves_it() -> None:
        await asyncio.sleep(0.3)
        graph.engine.save_extraction(shared, "base", [{"name": "Traefik"}], [])

    async def both() -> ReconciliationSummary:
        summary, _ = await asyncio.gather(
            graph.reconcile_session("s-1", llm_model_func=llm), other_run_saves_it()
        )
        return summary

    summary = asyncio.run(both())

    assert llm.inputs == ["Alice owns Falcon."]
    assert summary.status == "reconciled" and summary.duration_s >= 0.3
    assert (summary.chunks_extracted, summary.texts_deduped) == (1, 1)
    assert {"Traefik", "Alice", "Falcon"} <= names(graph, "s-1")


def test_a_chunk_a_dead_run_held_is_extracted_when_its_claim_expires(
    graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "CHUNK_POLL_SECONDS", 0.05)
    record(graph, "s-1", "alice", SHARED)
    claimed_elsewhere(graph, "s-1-a0", SHARED, lease=0.3)
    llm = ScriptedLLM()

    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm)

    assert llm.inputs == [SHARED]
    assert summary.status == "reconciled" and summary.duration_s >= 0.2
    assert summary.chunks_extracted == 1 and "Traefik" in names(graph, "s-1")


def test_a_failed_extraction_gives_its_chunk_claim_up(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Poison pill text.")
    failed = graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM(fail_on="Poison"))
    assert failed.status == "failed"

    started = time.monotonic()
    retried = graph.reconcile_session_sync("s-1", llm_model_func=ScriptedLLM())

    assert retried.status == "reconciled" and retried.chunks_extracted == 1
    assert time.monotonic() - started < 5  # not the failed run's 300 s lease


def test_descriptions_are_per_mention(graph: SessionsGraph) -> None:
    record(graph, "s-a", "alice", "Alice: Project Nimbus budget is secret.")
    record(graph, "s-b", "bob", "Bob: Project Nimbus launches soon.")
    asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))
    # A spare workspace has extracted nothing: it lists every chunk of a session.
    [alice_chunk] = graph.engine.unextracted_chunks("s-a", "spare")
    graph.engine.save_extraction(
        alice_chunk["hash"],
        "base",
        [{"name": "Nimbus", "entity_type": "project", "description": "Budget: 3 million."}],
        [],
    )

    bob_view = {e.name: e for e in graph.session_entities("s-b")}
    alice_view = {e.name: e for e in graph.session_entities("s-a")}

    assert alice_view["Nimbus"].description == "Budget: 3 million."
    assert bob_view["Nimbus"].description == "Nimbus is mentioned in the text."
    assert "Alice" not in bob_view and "Project" not in alice_view
    assert [s.session_id for s in graph.entity_sessions("nimbus", user_id="bob")] == ["s-b"]


def test_forget_session_keeps_what_others_still_use(graph: SessionsGraph) -> None:
    record(graph, "s-a", "alice", SHARED, "Only Alice knows Quasar.")
    record(graph, "s-b", "bob", SHARED)
    asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))

    counts = graph.forget_session("s-a")

    assert counts["sessions"] == 1 and counts["actions"] == 2
    assert counts["chunks"] == 1  # the shared chunk stays for bob
    assert graph.get_session("s-a") is None
    assert "Falcon" in names(graph, "s-b")
    assert graph.entity_sessions("Quasar", user_id="alice") == []
    assert [s.session_id for s in graph.entity_sessions("Falcon", user_id="bob")] == ["s-b"]


def test_forget_user_removes_everything_only_they_produced(graph: SessionsGraph) -> None:
    record(graph, "s-a1", "alice", SHARED, "Alice and Quasar.")
    record(graph, "s-a2", "alice", "Alice met Vega.")
    graph.save_memory("alice", "Alice likes Rigel.")
    record(graph, "s-b", "bob", SHARED)
    asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))

    counts = graph.forget_user("alice")

    assert counts["sessions"] == 2 and counts["memories"] == 1
    assert graph.get_memories("alice") == []
    assert "Traefik" in names(graph, "s-b")
    assert graph.entity_sessions("Vega", user_id="alice") == []


def test_the_llm_extractor_without_an_llm_claims_nothing(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice uses Memgraph.")

    with pytest.raises(ReconciliationNotConfiguredError, match="OPENAI_API_KEY"):
        asyncio.run(graph.reconcile_pending(extractor="llm"))

    assert graph.get_session("s-1").reconciliation_status == "pending"  # type: ignore[union-attr]


def test_secrets_never_reach_chunks_or_prompts(graph: SessionsGraph) -> None:
    secrets = {
        "sk-proj-Abcdefghijklmnopqrstuvwxyz012345",
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "hunter2hunter2",
        "MIIEpAIBAAKCAQEA7secretkeymaterial",
    }
    output = (
        "$ cat .env\nOPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwxyz012345\n"
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        "GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        "DATABASE_URL=postgres://app:hunter2hunter2@db.internal/app\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7secretkeymaterial\n"
        "-----END OPENSSH PRIVATE KEY-----\nDeploy Memgraph with these."
    )
    record(graph, "s-1", "alice", output)
    failing = ScriptedLLM(fail_on="Deploy")
    graph.reconcile_session_sync("s-1", llm_model_func=failing)  # leaves chunks unextracted
    stored = " ".join(c["text"] for c in graph.engine.unextracted_chunks("s-1", "base"))
    llm = ScriptedLLM()
    graph.reconcile_session_sync("s-1", llm_model_func=llm)

    assert "[REDACTED:aws_access_key]" in stored and "Deploy Memgraph" in stored
    for secret in secrets:
        assert secret not in stored
        assert not any(secret in prompt for prompt in failing.prompts + llm.prompts)


def test_user_counts_include_only_the_users_chunks_and_entities(graph: SessionsGraph) -> None:
    record(graph, "s-1", "alice", "Alice deployed Memgraph on Kubernetes.", SHARED)
    record(graph, "s-2", "bob", SHARED, "Bob restarted Traefik.")
    asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM()))
    alice = graph.status(user_id="alice")["counts"]
    bob = graph.status(user_id="bob")["counts"]
    assert alice["chunks"] == bob["chunks"] == 2  # the shared chunk counts for both
    assert alice["entities"] == len(names(graph, "s-1"))
    assert bob["entities"] == len(names(graph, "s-2"))
    assert graph.status(user_id="carol")["counts"]["chunks"] == 0


def test_user_counts_stay_exact_through_forget_for_ids_sharing_a_prefix(
    graph: SessionsGraph,
) -> None:
    # Every action key starts with its user's id: "bob" must not count "bob.2"'s.
    llm = ScriptedLLM()
    record(graph, "s-1", "bob", "Bob deployed Memgraph on Kubernetes.", SHARED)
    record(graph, "s-2", "bob.2", SHARED, "Two restarted Traefik.")
    record(graph, "s-3", "bob", "Bob wrote the Helm chart.")
    graph.save_memory("bob", "Bob prefers Grafana dashboards.", session_id="s-1")
    kept = graph.save_memory("bob.2", "Zed uses Falcon.", session_id="s-2")
    asyncio.run(graph.reconcile_pending(llm_model_func=llm))

    def counts(user: str) -> tuple[int, ...]:
        return tuple(graph.status(user_id=user)["counts"].values())

    # sessions, actions, memories, chunks (one a text, SHARED's one for
    # both), entities (the capitalised names in the user's own texts)
    assert counts("bob") == (2, 3, 1, 4, 8)
    assert counts("bob.2") == (1, 2, 1, 3, 6)  # and Zed
    record(graph, "s-4", "carl", SHARED)  # a chunk extracted already, newly carl's
    asyncio.run(graph.reconcile_pending(llm_model_func=llm))
    assert counts("carl") == (1, 1, 0, 1, 4)
    # SHARED extracted again (as a later extractor's findings replace the
    # earlier ones), naming Falcon only: Shared goes for both, Traefik for
    # bob, Memgraph for bob.2 (bob's own text names it).
    [(shared,)] = graph.engine._read("SELECT hash FROM chunks WHERE text = ?", (SHARED,))  # type: ignore[attr-defined]
    graph.engine.save_extraction(shared, graph.settings.entity_workspace, [{"name": "Falcon"}], [])
    assert counts("bob") == (2, 3, 1, 4, 6)
    assert counts("bob.2") == (1, 2, 1, 3, 4)
    assert counts("carl") == (1, 1, 0, 1, 1)
    graph.forget_session("s-1")  # its memory goes with it
    assert counts("bob") == (1, 1, 0, 1, 2)  # Bob, Helm
    assert counts("bob.2") == (1, 2, 1, 3, 4)
    graph.update_memory(kept.memory_id, "Zed moved to Kafka.")  # new text, new chunk
    asyncio.run(graph.reconcile_pending(llm_model_func=llm))
    assert counts("bob.2") == (1, 2, 1, 3, 5)  # the old chunk gone, Zed and Kafka named
    graph.delete_memory(kept.memory_id)
    assert counts("bob.2") == (1, 2, 0, 2, 3)  # Falcon, Traefik, Two
    graph.forget_user("bob.2")
    assert counts("bob.2") == (0, 0, 0, 0, 0)
    assert counts("bob") == (1, 1, 0, 1, 2)


def sweep(graph: SessionsGraph, llm: ScriptedLLM, lease: float) -> Any:
    """A sweep with a lease shorter than the Python API allows (1 s), so
    that a test can outlast several leases in a second."""
    options = pipeline.RunOptions(lease_seconds=lease)
    return pipeline.reconcile_pending(
        graph.engine, graph.settings, options, llm, limit=10, retry_failed=False
    )


def test_a_sweep_slower_than_its_lease_keeps_its_claims(
    graph: SessionsGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session claim and the chunk claims are renewed every third of the
    lease while the model works: a second sweep started two leases later
    takes neither the session nor its chunk, so nothing is paid for twice."""
    monkeypatch.setattr(pipeline, "CHUNK_POLL_SECONDS", 0.05)
    record(graph, "s-1", "alice", SHARED)
    llm = ScriptedLLM(delay=1.2)

    async def two_sweeps() -> tuple[list[ReconciliationSummary], list[ReconciliationSummary]]:
        first = asyncio.create_task(sweep(graph, llm, lease=0.3))
        await asyncio.sleep(0.8)
        # A session sharing the chunk in flight: the second sweep waits for
        # the first to save it instead of sending it again.
        record(graph, "s-2", "bob", SHARED)
        second = await sweep(graph, llm, lease=0.3)
        return await first, second

    first, second = asyncio.run(two_sweeps())

    assert llm.inputs == [SHARED]
    assert [(s.session_id, s.status) for s in first] == [("s-1", "reconciled")]
    assert [(s.session_id, s.status, s.texts_deduped) for s in second] == [("s-2", "reconciled", 1)]


def test_a_chunk_under_12_characters_costs_no_call(graph: SessionsGraph) -> None:
    """docs/reconciliation.md: chunks under 12 characters are marked
    extracted without a call; one of 12 is sent."""
    record(graph, "s-1", "alice", "Vega, Lyra!!", "Vega, Lyra!")
    llm = ScriptedLLM()

    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm)
    again = graph.reconcile_session_sync("s-1", llm_model_func=llm)

    assert llm.inputs == ["Vega, Lyra!!"]
    assert (summary.texts_considered, summary.chunks_extracted, summary.llm_calls) == (2, 1, 1)
    assert again.llm_calls == 0 and again.texts_deduped == 2


def test_duration_is_the_wall_time_to_the_millisecond(graph: SessionsGraph) -> None:
    for i in range(3):
        record(graph, f"s-{i}", "alice", f"Session {i} mentions Comet{i}.")
    started = time.monotonic()
    summaries = asyncio.run(graph.reconcile_pending(llm_model_func=ScriptedLLM(delay=0.1)))
    wall = time.monotonic() - started

    assert len(summaries) == 3
    for summary in summaries:
        assert 0.1 <= summary.duration_s <= wall
        assert summary.duration_s == round(summary.duration_s, 3)
        stored = graph.get_session(summary.session_id).last_summary  # type: ignore[union-attr]
        assert stored["duration_s"] == summary.duration_s


class Peak(ScriptedLLM):
    """A scripted model that records how many calls were in flight at most."""

    def __init__(self) -> None:
        super().__init__(delay=0.05)
        self.active = self.peak = 0

    async def __call__(self, prompt: str, *args: Any, **kwargs: Any) -> str:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            return await super().__call__(prompt, *args, **kwargs)
        finally:
            self.active -= 1


@pytest.mark.parametrize("concurrency", [1, 2])
def test_concurrency_bounds_the_calls_in_flight(graph: SessionsGraph, concurrency: int) -> None:
    """``concurrency`` (else the ``llm_concurrency`` setting, 4) bounds the
    calls in flight across the sweep's sessions."""
    for i in range(5):
        record(graph, f"s-{i}", "alice", f"Session {i} mentions Comet{i}.")
    llm = Peak()

    summaries = asyncio.run(graph.reconcile_pending(llm_model_func=llm, concurrency=concurrency))

    assert [s.status for s in summaries] == ["reconciled"] * 5
    assert llm.calls == 5 and llm.peak == concurrency


def test_a_failed_chunk_lets_the_sessions_other_chunks_finish(graph: SessionsGraph) -> None:
    """The other chunks of a failing session are still extracted, saved and
    counted: the retry sends only the chunk that failed."""
    record(graph, "s-1", "alice", "Poison pill text.", "Alice deployed Memgraph on Kubernetes.")

    class SlowUnlessPoison(ScriptedLLM):
        async def __call__(self, prompt: str, *args: Any, **kwargs: Any) -> str:
            if "Poison" not in input_text(prompt):
                await asyncio.sleep(0.3)  # still in flight when the other fails
            return await super().__call__(prompt, *args, **kwargs)

    llm = SlowUnlessPoison(fail_on="Poison")
    failed = graph.reconcile_session_sync("s-1", llm_model_func=llm)
    retry = ScriptedLLM()
    retried = graph.reconcile_session_sync("s-1", llm_model_func=retry)

    assert failed.status == "failed" and failed.llm_calls == llm.calls == 2
    assert retry.inputs == ["Poison pill text."]
    assert retried.status == "reconciled" and {"Alice", "Memgraph"} <= names(graph, "s-1")


def test_a_failure_is_stored_on_one_line_and_cut_to_500_characters(
    graph: SessionsGraph,
) -> None:
    record(graph, "s-1", "alice", "Alice deployed Memgraph.")

    async def verbose(prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
        raise RuntimeError("upstream said:\n" + "x" * 2000)

    failed = graph.reconcile_session_sync("s-1", llm_model_func=verbose)

    session = graph.get_session("s-1")
    assert session is not None and session.reconciliation_error == failed.error
    assert failed.error is not None and len(failed.error) == 500 and "\n" not in failed.error
    assert failed.error.startswith("extraction of chunk ")
    assert "RuntimeError: upstream said: xxx" in failed.error


def test_a_sweep_reports_what_it_claimed_then_each_result(graph: SessionsGraph) -> None:
    for i in range(3):
        record(graph, f"s-{i}", "alice", f"Session {i} mentions Comet{i}.")
    events: list[object] = []

    summaries = asyncio.run(
        graph.reconcile_pending(
            llm_model_func=ScriptedLLM(),
            on_claimed=events.append,
            on_result=lambda s: events.append(s.session_id),
        )
    )

    assert events[0] == ["s-0", "s-1", "s-2"]
    assert sorted(events[1:]) == ["s-0", "s-1", "s-2"]  # type: ignore[type-var]
    assert [s.session_id for s in summaries] == ["s-0", "s-1", "s-2"]


def test_an_unknown_session_is_refused(graph: SessionsGraph) -> None:
    with pytest.raises(MemoryValidationError, match="unknown session 's-none'"):
        graph.reconcile_session_sync("s-none", llm_model_func=ScriptedLLM())
