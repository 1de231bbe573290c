"""Reconciliation writes each session's digest: with the run's LLM, one
request per session, never twice for the same content; offline without one."""

from __future__ import annotations

import asyncio
import json

from reconcile_scripted import ScriptedLLM

from sessions_graph import SessionsGraph


def _work(graph: SessionsGraph, sid: str, request: str) -> None:
    graph.record_session_start(sid, user_id="alice", cwd="/src/orion")
    graph.record_actions(
        sid,
        [
            {"action_id": f"{sid}-0", "action_type": "user_message", "text": request},
            {
                "action_id": f"{sid}-1",
                "action_type": "tool_call",
                "tool_name": "Write",
                "tool_use_id": f"{sid}-t",
                "text": json.dumps({"file_path": "/src/orion/queue.py", "content": "x"}),
            },
            {"action_id": f"{sid}-2", "action_type": "tool_result", "tool_use_id": f"{sid}-t"},
            {
                "action_id": f"{sid}-3",
                "action_type": "assistant_message",
                "text": "We'll use RQ for the Orion queue.",
            },
        ],
        user_id="alice",
    )
    graph.record_session_end(sid)


def test_the_llm_writes_one_digest_per_session_and_never_twice(graph: SessionsGraph) -> None:
    llm = ScriptedLLM()
    _work(graph, "s-1", "Add a job queue module to Orion")
    _work(graph, "s-2", "Document the Orion deployment")
    summaries = asyncio.run(graph.reconcile_pending(llm_model_func=llm, extractor="llm"))
    assert sorted(s.digest for s in summaries) == ["llm", "llm"]
    assert len(llm.digest_prompts) == 2  # one request per session
    assert sum(s.llm_calls for s in summaries) == llm.calls + 2  # counted with extraction's
    digest = graph.session_digest("s-1")
    assert digest is not None and digest["source"] == "llm"
    assert digest["goal"] == "Scripted: Add a job queue module to Orion"
    assert digest["done"] == ["Scripted summary of the work"]
    assert digest["files"] == [{"path": "queue.py", "change": "written"}]  # the exact facts stay
    assert "Add a job queue module to Orion" in llm.digest_prompts[0] + llm.digest_prompts[1]

    # A re-run over the same content sends nothing, and keeps the LLM's digest.
    again = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")
    assert again.digest == "llm-kept" and again.llm_calls == 0
    assert len(llm.digest_prompts) == 2
    graph.build_digest("s-1")  # the SessionEnd hook's offline digest does not replace it
    assert graph.session_digest("s-1")["source"] == "llm"  # type: ignore[index]

    # New content: one more request, for that session only.
    graph.record_actions(
        "s-1",
        [{"action_id": "s-1-4", "action_type": "user_message", "text": "Also add retries"}],
    )
    graph.record_session_end("s-1")
    asyncio.run(graph.reconcile_pending(llm_model_func=llm, extractor="llm"))
    assert len(llm.digest_prompts) == 3 and "Also add retries" in llm.digest_prompts[-1]


def test_without_an_llm_the_digest_is_offline(graph: SessionsGraph) -> None:
    _work(graph, "s-1", "Add a job queue module to Orion")
    summary = graph.reconcile_session_sync("s-1", extractor="local")
    assert summary.digest == "offline" and summary.llm_calls == 0
    digest = graph.session_digest("s-1")
    assert digest is not None and digest["source"] == "offline"
    assert digest["decisions"] == ["We'll use RQ for the Orion queue."]


def test_small_talk_costs_no_digest_request(graph: SessionsGraph) -> None:
    llm = ScriptedLLM()
    graph.record_actions(
        "s-hi",
        [{"action_id": "hi-0", "action_type": "user_message", "text": "hello"}],
        user_id="alice",
    )
    summary = graph.reconcile_session_sync("s-hi", llm_model_func=llm, extractor="llm")
    assert summary.digest == "offline" and llm.digest_prompts == []
    assert graph.session_digest("s-hi")["substance"] is False  # type: ignore[index]


def test_the_digest_request_counts_every_character_sent(graph: SessionsGraph) -> None:
    sent: list[int] = []
    scripted = ScriptedLLM()

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: object) -> str:
        sent.append(len(prompt) + len(system_prompt or ""))
        return await scripted(prompt, system_prompt, **kwargs)  # type: ignore[arg-type]

    _work(graph, "s-1", "Add a job queue module to Orion")
    summary = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")

    assert summary.digest == "llm" and len(scripted.digest_prompts) == 1
    assert summary.llm_calls == len(sent) and summary.chars_sent == sum(sent)


def test_actions_the_digest_does_not_read_keep_the_llms_digest(graph: SessionsGraph) -> None:
    """A new action the digest prompt leaves out (a system message) costs no
    request, and the SessionEnd hook's offline rebuild after it does not
    replace the LLM's digest: the kept digest counts the new action."""
    llm = ScriptedLLM()
    _work(graph, "s-1", "Add a job queue module to Orion")
    assert graph.build_digest("s-1") is True  # stored, offline
    graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")
    graph.record_actions(
        "s-1", [{"action_id": "s-1-sys", "action_type": "system_message", "text": "Compacted."}]
    )

    again = graph.reconcile_session_sync("s-1", llm_model_func=llm, extractor="llm")
    assert graph.build_digest("s-1") is False  # the LLM's digest is kept

    assert again.digest == "llm-kept" and len(llm.digest_prompts) == 1
    digest = graph.session_digest("s-1")
    assert digest is not None and digest["source"] == "llm"
