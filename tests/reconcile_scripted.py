"""Scripted LLM functions for the reconciliation tests (no network, no model),
and ``record``, the finished session those tests reconcile.

They answer in LightRAG 1.5.7's real text extraction format: one
``entity<|#|>name<|#|>type<|#|>description`` row per entity, one
``relation<|#|>source<|#|>target<|#|>keywords<|#|>description`` row per
relation, then ``<|COMPLETE|>``. Entities are the capitalised words of the
chunk, so the tests can predict them.

``slow_llm`` is importable by a CLI subprocess through
``SESSIONS_GRAPH_LLM_FUNC=reconcile_scripted:slow_llm`` (with ``tests`` on
``PYTHONPATH``); it sleeps ``SCRIPTED_LLM_DELAY`` seconds per call and appends
each chunk it saw to the file ``SCRIPTED_LLM_LOG``, so that a test can count
calls across processes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
from typing import TYPE_CHECKING, Any

from sessions_graph.digest import LLM_MARKER

if TYPE_CHECKING:
    from sessions_graph import SessionsGraph

DELIM, DONE = "<|#|>", "<|COMPLETE|>"
_INPUT = re.compile(r"---Input Text---\n```\n(.*?)\n```", re.DOTALL)
_NAME = re.compile(r"\b[A-Z][a-zA-Z]{2,}\b")


def record(graph: SessionsGraph, session_id: str, user: str, *texts: str) -> None:
    """A finished session whose actions carry ``texts`` (ids derived from the session)."""
    graph.record_session_start(session_id, user_id=user)
    actions = [
        {"action_id": f"{session_id}-a{i}", "action_type": "tool_result", "text": text}
        for i, text in enumerate(texts)
    ]
    graph.record_actions(session_id, actions, user_id=user)
    graph.record_session_end(session_id)


def input_text(prompt: str) -> str:
    """The chunk text LightRAG embedded in its extraction prompt."""
    match = _INPUT.search(prompt)
    return match.group(1) if match else ""


def extraction_output(text: str) -> str:
    """A valid LightRAG extraction answer for ``text``."""
    names = list(dict.fromkeys(_NAME.findall(text)))[:8]
    rows = [f"entity{DELIM}{n}{DELIM}Concept{DELIM}{n} is mentioned in the text." for n in names]
    rows += [
        f"relation{DELIM}{a}{DELIM}{b}{DELIM}co-occurrence{DELIM}{a} appears with {b}."
        for a, b in itertools.pairwise(names)
    ]
    return "\n".join([*rows, DONE])


def digest_output(prompt: str) -> str:
    """A digest answer, as an LLM gives it: prose around one JSON object whose
    goal is the transcript's first user line."""
    first = next(
        (line[len("user: ") :] for line in prompt.splitlines() if line.startswith("user: ")), ""
    )
    body = {
        "goal": f"Scripted: {first}",
        "done": ["Scripted summary of the work"],
        "decisions": ["Scripted decision"],
        "open": ["Scripted next step"],
    }
    return f"Here is the digest:\n{json.dumps(body)}\n"


class ScriptedLLM:
    """An in-process model function that records every prompt it receives."""

    def __init__(self, delay: float = 0.0, fail_on: str | None = None) -> None:
        self.delay = delay
        self.fail_on = fail_on
        self.prompts: list[str] = []
        self.inputs: list[str] = []
        #: The digest requests (one per session with substance and new content).
        self.digest_prompts: list[str] = []

    @property
    def calls(self) -> int:
        return len(self.prompts)

    async def __call__(
        self,
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> str:
        if LLM_MARKER in prompt:  # a session's digest, not an extraction
            self.digest_prompts.append(prompt)
            return digest_output(prompt)
        self.prompts.append("\n".join([system_prompt or "", prompt]))
        text = input_text(prompt)
        self.inputs.append(text)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail_on and self.fail_on in text:
            raise RuntimeError(f"scripted model refuses text containing {self.fail_on!r}")
        return extraction_output(text)


async def slow_llm(
    prompt: str,
    system_prompt: str | None = None,
    history_messages: list[dict[str, Any]] | None = None,
    **kwargs: Any,
) -> str:
    """A slow model function for subprocess tests (see the module docstring)."""
    text = input_text(prompt)
    log = os.environ.get("SCRIPTED_LLM_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(text.replace("\n", " ")[:80] + "\n")
    await asyncio.sleep(float(os.environ.get("SCRIPTED_LLM_DELAY", "0.5")))
    return extraction_output(text)
