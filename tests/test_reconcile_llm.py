"""The OpenAI model function against a real HTTP server on loopback.

The server speaks the OpenAI chat-completions protocol (what ``OPENAI_BASE_URL``
points at for local models) and answers from a script: the tests check that
rate limits and server errors are retried with backoff, that a bad request
is not, and that a whole reconciliation runs through it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import reconcile_scripted
from reconcile_scripted import extraction_output, input_text

from sessions_graph import SessionsGraph
from sessions_graph.errors import ConfigError, ReconciliationNotConfiguredError
from sessions_graph.reconcile import llm
from sessions_graph.reconcile.pipeline import RunOptions, choose_extractor
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
                answer = extraction_output(input_text(body["messages"][-1]["content"]))
                if self.path.endswith("/messages"):  # the Anthropic Messages API
                    payload = (
                        {
                            "id": "msg_1",
                            "type": "message",
                            "role": "assistant",
                            "model": body["model"],
                            "content": [{"type": "text", "text": answer}],
                            "stop_reason": "end_turn",
                            "stop_sequence": None,
                            "usage": {"input_tokens": 1, "output_tokens": 1},
                        }
                        if status == 200
                        else {"type": "error", "error": {"type": "api_error", "message": "x"}}
                    )
                elif status == 200:
                    payload = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": answer},
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
    assert len(server.requests) == 6  # docs/reconciliation.md: up to 6 attempts


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
    assert summary.llm_calls == len(server.requests) == 6
    assert summary.chars_sent >= 6 * len("Deploy Orion on Friday.")


HISTORY = [
    {"role": "user", "content": "An earlier request."},
    {"role": "assistant", "content": "Its answer."},
]


@pytest.mark.parametrize("server", [[429]], indirect=True)
def test_openai_requests_carry_the_history_and_ask_for_a_steady_bounded_answer(
    server: ScriptedServer, fast_backoff
) -> None:
    """docs/reconciliation.md: the default model, temperature 0, at most
    4,096 output tokens; the history (gleaning's first exchange) goes
    between the system prompt and the prompt."""
    func = llm.resolve(Settings(openai_base_url=server.url))
    asyncio.run(func(PROMPT, system_prompt="extract", history_messages=HISTORY))
    request = server.requests[-1]
    assert len(server.requests) == 2  # the 429 retried once by us, never by the SDK
    assert request["model"] == "gpt-4o-mini"
    assert request["messages"] == [
        {"role": "system", "content": "extract"},
        *HISTORY,
        {"role": "user", "content": PROMPT},
    ]
    assert (request["temperature"], request["max_tokens"]) == (0, 4096)


@pytest.fixture
def anthropic_server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ScriptedServer]:
    """The scripted server as the Anthropic SDK's endpoint (its base URL
    comes from the environment, as for any Anthropic-compatible gateway)."""
    srv = ScriptedServer(list(getattr(request, "param", [])))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url.removesuffix("/v1"))
    yield srv
    srv.close()


@pytest.mark.parametrize("anthropic_server", [[529, 500]], indirect=True)
def test_the_anthropic_function_retries_overload_and_server_errors(
    anthropic_server: ScriptedServer, fast_backoff
) -> None:
    pytest.importorskip("anthropic")
    func = llm.resolve(Settings(anthropic_api_key="sk-ant-test"))
    answer = asyncio.run(func(PROMPT, system_prompt="extract", history_messages=HISTORY))
    assert "entity<|#|>Orion" in answer and answer.endswith("<|COMPLETE|>")
    assert len(anthropic_server.requests) == 3
    request = anthropic_server.requests[-1]
    assert request["model"] == "claude-3-5-haiku-latest" and request["system"] == "extract"
    assert request["messages"] == [*HISTORY, {"role": "user", "content": PROMPT}]
    assert request["max_tokens"] == 4096
    # Without history or a system prompt: the prompt alone.
    asyncio.run(func(PROMPT))
    assert anthropic_server.requests[-1]["messages"] == [{"role": "user", "content": PROMPT}]
    assert "system" not in anthropic_server.requests[-1]


@pytest.mark.parametrize("anthropic_server", [[500] * 10], indirect=True)
def test_anthropic_retries_are_bounded(anthropic_server: ScriptedServer, fast_backoff) -> None:
    anthropic = pytest.importorskip("anthropic")
    func = llm.resolve(Settings(anthropic_api_key="sk-ant-test", llm_model="claude-x"))
    with pytest.raises(anthropic.InternalServerError):
        asyncio.run(func(PROMPT))
    assert len(anthropic_server.requests) == 6
    assert {r["model"] for r in anthropic_server.requests} == {"claude-x"}


@pytest.mark.parametrize("spec", ["reconcile_scripted", ":slow_llm", "reconcile_scripted:", ":"])
def test_a_malformed_model_function_setting_says_what_it_should_look_like(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONS_GRAPH_LLM_FUNC", spec)
    with pytest.raises(ConfigError, match="must look like module:function"):
        llm.resolve(Settings())


def test_the_model_function_setting_names_a_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSIONS_GRAPH_LLM_FUNC", "reconcile_scripted:slow_llm")
    assert llm.resolve(Settings(openai_api_key="sk-x")) is reconcile_scripted.slow_llm
    assert llm.describe(Settings()) == "reconcile_scripted:slow_llm"
    monkeypatch.setenv("SESSIONS_GRAPH_LLM_FUNC", "reconcile_scripted:no_such_function")
    with pytest.raises(ConfigError, match="cannot load"):
        llm.resolve(Settings())


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        (Settings(llm_provider="gemini"), ConfigError, "must be 'openai' or 'anthropic'"),
        (Settings(llm_provider="openai"), ReconciliationNotConfiguredError, "OPENAI_API_KEY"),
        (
            Settings(llm_provider="anthropic", openai_api_key="sk-x"),
            ReconciliationNotConfiguredError,
            "ANTHROPIC_API_KEY",
        ),
    ],
)
def test_a_provider_without_its_key_is_not_configured(
    settings: Settings, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        llm.resolve(settings)


def test_a_provider_sdk_that_does_not_import_means_the_local_extractor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key set on a plain install: ``auto`` runs the local extractor and
    says why; ``llm`` says what to install. A model function named in the
    environment needs no SDK."""
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import fails, as when not installed
    settings = Settings(anthropic_api_key="sk-ant-test")

    assert llm.missing_package(settings) == "anthropic"
    note = llm.fallback_note(settings)
    assert note is not None
    assert note.startswith("anthropic/claude-3-5-haiku-latest is configured but the anthropic")
    assert choose_extractor(settings, RunOptions()) == "local"
    with pytest.raises(ConfigError, match="the anthropic package is missing"):
        llm.resolve(settings)

    monkeypatch.setenv("SESSIONS_GRAPH_LLM_FUNC", "reconcile_scripted:slow_llm")
    assert llm.missing_package(settings) is None and llm.fallback_note(settings) is None
    assert choose_extractor(settings, RunOptions()) == "llm"


def test_nothing_configured_is_the_local_extractor_without_a_note() -> None:
    assert llm.describe(Settings()) is None
    assert llm.missing_package(Settings()) is None and llm.fallback_note(Settings()) is None
    assert choose_extractor(Settings(), RunOptions()) == "local"
