"""The OpenAI model function against a real HTTP server on loopback.

The server speaks the OpenAI chat-completions protocol (what ``OPENAI_BASE_URL``
points at for local models) and answers from a script: the tests check that
rate limits and server errors are retried with backoff, that a bad request
is not, and that a whole reconciliation runs through it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from reconcile_scripted import extraction_output, input_text

from sessions_graph import SessionsGraph
from sessions_graph.reconcile import llm
from sessions_graph.settings import Settings

pytest.importorskip("openai")


class ScriptedServer:
    """An OpenAI-compatible endpoint answering with scripted status codes."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses  # consumed per request; 200 once exhausted
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                status = server.statuses.pop(0) if server.statuses else 200
                if status == 200:
                    prompt = body["messages"][-1]["content"]
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": extraction_output(input_text(prompt)),
                                },
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                else:
                    payload = {"error": {"message": f"scripted {status}", "type": "scripted"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "BACKOFF_MIN", 0.01)
    monkeypatch.setattr(llm, "BACKOFF_MAX", 0.05)


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    srv = ScriptedServer(list(getattr(request, "param", [])))
    yield srv
    srv.close()


PROMPT = "---Input Text---\n```\nOrion talks to Memgraph.\n```"


@pytest.mark.parametrize("server", [[429, 500, 503]], indirect=True)
def test_rate_limits_and_server_errors_are_retried(server: ScriptedServer, fast_backoff) -> None:
    func = llm.resolve(Settings(openai_base_url=server.url, llm_model="local-model"))
    answer = asyncio.run(func(PROMPT, system_prompt="extract"))
    assert "entity<|#|>Orion" in answer and answer.endswith("<|COMPLETE|>")
    assert len(server.requests) == 4
    assert server.requests[-1]["model"] == "local-model"
    assert server.requests[-1]["messages"][0] == {"role": "system", "content": "extract"}


@pytest.mark.parametrize("server", [[400, 200]], indirect=True)
def test_a_bad_request_fails_at_once(server: ScriptedServer, fast_backoff) -> None:
    import openai

    func = llm.resolve(Settings(openai_base_url=server.url))
    with pytest.raises(openai.BadRequestError):
        asyncio.run(func(PROMPT))
    assert len(server.requests) == 1


@pytest.mark.parametrize("server", [[429] * 10], indirect=True)
def test_retries_are_bounded(server: ScriptedServer, fast_backoff) -> None:
    import openai

    func = llm.resolve(Settings(openai_base_url=server.url))
    with pytest.raises(openai.RateLimitError):
        asyncio.run(func(PROMPT))
    assert len(server.requests) == llm.ATTEMPTS


@pytest.mark.parametrize("server", [[429]], indirect=True)
def test_a_session_reconciles_through_an_openai_compatible_server(
    graph: SessionsGraph, server: ScriptedServer, fast_backoff
) -> None:
    graph.settings = Settings(openai_base_url=server.url, db=graph.settings.db)
    graph.record_actions(
        "s-1",
        [
            {
                "action_id": "a-1",
                "action_type": "user_message",
                "text": "Deploy Orion next to Memgraph on Friday.",
            }
        ],
        user_id="alice",
    )
    graph.record_session_end("s-1")
    summary = graph.reconcile_session_sync("s-1")
    assert summary.status == "reconciled" and summary.error is None
    # Every request sent counts: the 429 too, and the session's digest.
    assert summary.llm_calls == len(server.requests) == 3
    assert {"Orion", "Memgraph"} <= {e.name for e in graph.session_entities("s-1")}


@pytest.mark.parametrize("server", [[500] * 10], indirect=True)
def test_a_failed_session_counts_every_request_it_sent(
    graph: SessionsGraph, server: ScriptedServer, fast_backoff
) -> None:
    graph.settings = Settings(openai_base_url=server.url, db=graph.settings.db)
    graph.record_actions(
        "s-1",
        [{"action_id": "a-1", "action_type": "user_message", "text": "Deploy Orion on Friday."}],
        user_id="alice",
    )
    summary = graph.reconcile_session_sync("s-1")
    assert summary.status == "failed"
    assert summary.llm_calls == len(server.requests) == llm.ATTEMPTS
    assert summary.chars_sent >= llm.ATTEMPTS * len("Deploy Orion on Friday.")
