"""The real Claude Code CLI against a local, scripted Messages API.

``FakeAnthropic`` is a small HTTP server on 127.0.0.1 that answers
``POST /v1/messages`` the way the Anthropic API streams (server-sent
events: ``message_start``, content blocks with their deltas,
``message_delta``, ``message_stop``), or with one JSON message when the
request does not ask for a stream. It records every request body, so a
test can check what really reached the model: the system prompt, the
messages with whatever hooks injected, the tool list. Replies are scripted
(``then``): text, or ``tool_use`` blocks, which Claude Code executes and
answers with a ``tool_result`` in its next request.

``ClaudeCode`` runs ``claude -p PROMPT`` (print mode) with a scratch
``HOME``, the fake API as ``ANTHROPIC_BASE_URL``, telemetry, updates and
non-essential traffic off, and the sessions-graph settings of the test
(store, user, state), which the hooks it starts inherit.

The ``claude`` binary is ``$CLAUDE_CODE_BIN``, else the one ``.ci/run``
installs (``.ci/node/node_modules/.bin/claude``), else ``claude`` on PATH;
without one the tests using the ``claude_code`` fixture are skipped.
Nothing here reaches the network: the only server is on loopback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from scripted_api import ScriptedAPI

REPO = Path(__file__).resolve().parent.parent
#: The claude binary .ci/run installs.
CI_CLAUDE = REPO / ".ci" / "node" / "node_modules" / ".bin" / "claude"


def find_claude() -> str | None:
    """The Claude Code binary to test with, or None."""
    explicit = os.environ.get("CLAUDE_CODE_BIN")
    if explicit:
        return explicit
    if CI_CLAUDE.exists():
        return str(CI_CLAUDE)
    return shutil.which("claude")


def text(value: str) -> dict[str, Any]:
    """A text content block for a scripted reply."""
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: dict[str, Any], tool_id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` content block for a scripted reply."""
    return {
        "type": "tool_use",
        "id": tool_id or f"toolu_{abs(hash((name, json.dumps(tool_input)))) % 10**12:012d}",
        "name": name,
        "input": tool_input,
    }


class FakeAnthropic(ScriptedAPI):
    """A local Messages API with scripted replies; records every request."""

    def _default(self, reply: str) -> dict[str, Any]:
        return text(reply)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # the http.server API names these
                self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._json(400, {"type": "error", "error": {"type": "invalid_request_error"}})
                    return
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._json(200, {"input_tokens": 100})
                    return
                blocks = fake._reply_to(body)
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                if body.get("stream"):
                    self._stream(body, blocks, stop)
                else:
                    self._json(200, _message(body, blocks, stop))

            def _json(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(
                self, body: dict[str, Any], blocks: list[dict[str, Any]], stop: str
            ) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                for event in _events(body, blocks, stop):
                    self.wfile.write(
                        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    )
                self.wfile.flush()

        return Handler


def _message(body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


def _events(
    body: dict[str, Any], blocks: list[dict[str, Any]], stop: str
) -> Iterator[dict[str, Any]]:
    """The Messages API's stream events for a reply made of ``blocks``."""
    start = _message(body, [], "")
    start.update(stop_reason=None, usage={"input_tokens": 100, "output_tokens": 1})
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {**block, "input": {}},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 10},
    }
    yield {"type": "message_stop"}


class ClaudeCode:
    """``claude -p`` in a scratch home, talking to ``api``."""

    def __init__(self, binary: str, root: Path, api: FakeAnthropic) -> None:
        self.binary = binary
        self.api = api
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.env = {
            # The package's own commands on PATH first, as an installed user
            # has them: project-scope files run ``sessions-graph`` by name.
            "PATH": os.pathsep.join(
                [str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")]
            ),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # The sessions-graph settings the hooks will read.
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_STATE_HOME": str(root / "state"),
            "SESSIONS_GRAPH_DB": str(root / "sessions.db"),
            "SESSIONS_GRAPH_USER_ID": "alice",
        }
        if os.environ.get("PYTHONPATH"):  # hooks must run the code under test
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def sessions_graph(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Our own CLI, with the same home and settings as claude."""
        return subprocess.run(
            [sys.executable, "-m", "sessions_graph", *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )

    def install_hooks(self) -> None:
        result = self.sessions_graph("install-hooks")
        assert result.returncode == 0, result.stderr

    def run(
        self, prompt: str, cwd: Path, *args: str, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """``claude -p PROMPT [ARGS]`` in ``cwd``; fails the test if claude does."""
        cwd.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [self.binary, "-p", prompt, *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-2000:])
        return result


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    api = FakeAnthropic().start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def claude_code(tmp_path: Path, fake_anthropic: FakeAnthropic) -> ClaudeCode:
    binary = find_claude()
    if binary is None:
        pytest.skip(
            "Claude Code is not installed: npm install @anthropic-ai/claude-code"
            " (.ci/run installs it), or set CLAUDE_CODE_BIN"
        )
    return ClaudeCode(binary, tmp_path / "claude", fake_anthropic)


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text a request carries to the model (system prompt and
    messages, including tool results), joined, for assertions."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in ("text", "content", "system"):
                if key in value:
                    walk(value[key])

    walk(request.get("system"))
    walk(request.get("messages"))
    return "\n".join(parts)
