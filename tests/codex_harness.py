"""The real Codex CLI against a local, scripted Responses API.

``FakeResponses`` is a small HTTP server on 127.0.0.1 that answers
``POST /v1/responses`` the way OpenAI's Responses API streams (server-sent
events: ``response.created``, each output item's ``output_item.added``,
its text deltas and ``output_item.done``, then ``response.completed``). It
records every request body, so a test can check what really reached the
model: the instructions, the input items with whatever hooks injected, the
tools. Replies are scripted (``then``): assistant text, or ``function_call``
items, which Codex executes and answers with a ``function_call_output`` item
in its next request.

``Codex`` runs ``codex exec PROMPT`` with a scratch ``HOME`` and
``CODEX_HOME`` whose ``config.toml`` names the fake server as a
``model_providers`` entry (``wire_api = "responses"``), with an API key from
the environment, and the sessions-graph settings of the test (store, user,
state), which the hooks and the MCP server it starts inherit.

The ``codex`` binary is ``$CODEX_BIN``, else the one ``.ci/run`` installs
(``.ci/node/node_modules/.bin/codex``), else ``codex`` on PATH; without one
the tests using the ``codex`` fixture are skipped. Nothing here reaches the
network: the only server is on loopback.
"""

from __future__ import annotations

import itertools
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
#: The codex binary .ci/run installs.
CI_CODEX = REPO / ".ci" / "node" / "node_modules" / ".bin" / "codex"
#: The model the scratch config asks for: one in Codex 0.171's own catalog
#: (an unknown name gets fallback metadata, without ``tool_search``), and not
#: a ``code_mode_only`` one, so that tools are plain function calls.
MODEL = "gpt-5.5"

_ids = itertools.count(1)


def find_codex() -> str | None:
    """The Codex binary to test with, or None."""
    explicit = os.environ.get("CODEX_BIN")
    if explicit:
        return explicit
    if CI_CODEX.exists():
        return str(CI_CODEX)
    return shutil.which("codex")


def message(value: str) -> dict[str, Any]:
    """An assistant message output item for a scripted reply."""
    return {
        "type": "message",
        "id": f"msg_{next(_ids)}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


def function_call(
    name: str, arguments: dict[str, Any], call_id: str | None = None, namespace: str | None = None
) -> dict[str, Any]:
    """A ``function_call`` output item (a tool call) for a scripted reply; an
    MCP tool found by ``tool_search`` is called with its ``namespace``
    (``mcp__<server>``, the server name with ``-`` made ``_``)."""
    n = next(_ids)
    item = {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": call_id or f"call_{n}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def custom_tool_call(name: str, tool_input: str, call_id: str | None = None) -> dict[str, Any]:
    """A ``custom_tool_call`` output item: a freeform tool such as
    ``apply_patch``, whose input is raw text (a patch), not JSON."""
    n = next(_ids)
    return {
        "type": "custom_tool_call",
        "id": f"ctc_{n}",
        "call_id": call_id or f"call_{n}",
        "name": name,
        "input": tool_input,
        "status": "completed",
    }


def tool_search_call(query: str, call_id: str | None = None, limit: int = 8) -> dict[str, Any]:
    """A client-executed ``tool_search_call`` output item: the model asking
    Codex to search its deferred tools (MCP tools sit behind it)."""
    n = next(_ids)
    return {
        "type": "tool_search_call",
        "id": f"ts_{n}",
        "call_id": call_id or f"search_{n}",
        "execution": "client",
        "arguments": {"query": query, "limit": limit},
        "status": "completed",
    }


class FakeResponses(ScriptedAPI):
    """A local Responses API with scripted replies; records every request."""

    BASE_PATH = "/v1"

    def __init__(self, default_reply: str = "OK.") -> None:
        self.paths: list[str] = []
        super().__init__(default_reply)

    def _default(self, reply: str) -> dict[str, Any]:
        return message(reply)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # the http.server API names these
                fake.paths.append(f"GET {self.path}")
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"models": []})
                    return
                self._json(404, {"error": {"message": "not found", "type": "not_found"}})

            def do_POST(self) -> None:
                fake.paths.append(f"POST {self.path}")
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "bad json", "type": "invalid_request"}})
                    return
                if not self.path.rstrip("/").endswith("/responses"):
                    self._json(404, {"error": {"message": "not found", "type": "not_found"}})
                    return
                items = fake._reply_to(body)
                self._stream(body, items)

            def _json(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any], items: list[dict[str, Any]]) -> None:
                chunks = b"".join(
                    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                    for e in _events(body, items)
                )
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("content-length", str(len(chunks)))
                self.end_headers()
                self.wfile.write(chunks)
                self.wfile.flush()

        return Handler


def _response(body: dict[str, Any], status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"resp_{next(_ids)}",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": body.get("model", MODEL),
        "output": output,
        "usage": {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        },
    }


def _events(body: dict[str, Any], items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The Responses API's stream events for a reply made of ``items``."""
    seq = itertools.count()
    created = _response(body, "in_progress", [])
    yield {"type": "response.created", "sequence_number": next(seq), "response": created}
    for index, item in enumerate(items):
        if item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
        else:
            added = {**item, "status": "in_progress"}
        yield {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": index,
            "item": added,
        }
        if item["type"] == "message":
            for part, content in enumerate(item["content"]):
                yield {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": part,
                    "delta": content["text"],
                }
        yield {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": index,
            "item": item,
        }
    done = _response(body, "completed", items)
    done["id"] = created["id"]
    yield {"type": "response.completed", "sequence_number": next(seq), "response": done}


class Codex:
    """``codex exec`` in a scratch home, talking to ``api``."""

    def __init__(self, binary: str, root: Path, api: FakeResponses) -> None:
        self.binary = binary
        self.api = api
        self.root = root
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self.config = self.codex_home / "config.toml"
        self.config.write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "\n"
            "[model_providers.fake]\n"
            'name = "Scripted Responses API"\n'
            f'base_url = "{api.url}"\n'
            'env_key = "FAKE_OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n"
        )
        self.env = {
            # codex on PATH: install-hooks --codex runs it to trust our hooks.
            "PATH": os.pathsep.join(
                [str(Path(binary).parent), os.environ.get("PATH", "/usr/bin:/bin")]
            ),
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "LANG": "C.UTF-8",
            "FAKE_OPENAI_API_KEY": "sk-test-not-a-real-key",
            "RUST_LOG": "error",
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
        """Our own CLI, with the same home and settings as codex."""
        return self.sessions_graph_env(self.env, *args)

    def sessions_graph_env(
        self, env: dict[str, str], *args: str
    ) -> subprocess.CompletedProcess[str]:
        """Our own CLI with ``env`` (a variation of ``self.env``)."""
        return subprocess.run(
            [sys.executable, "-m", "sessions_graph", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    def install_hooks(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = self.sessions_graph("install-hooks", "--codex", *args)
        assert result.returncode == 0, result.stderr
        return result

    def run(
        self, prompt: str, cwd: Path, *args: str, timeout: float = 180, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``codex exec [ARGS] PROMPT`` in ``cwd``; fails the test if codex does."""
        cwd.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [self.binary, "exec", "--skip-git-repo-check", "--color", "never", *args, prompt],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if check:
            assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-3000:])
        return result

    def rollouts(self) -> list[Path]:
        """The session rollout files Codex wrote, oldest first."""
        return sorted((self.codex_home / "sessions").rglob("rollout-*.jsonl"))


@pytest.fixture
def fake_responses() -> Iterator[FakeResponses]:
    api = FakeResponses().start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def codex(tmp_path: Path, fake_responses: FakeResponses) -> Codex:
    binary = find_codex()
    if binary is None:
        pytest.skip(
            "Codex is not installed: npm install @openai/codex"
            " (.ci/run installs it), or set CODEX_BIN"
        )
    return Codex(binary, tmp_path / "codex", fake_responses)


def request_text(request: dict[str, Any]) -> str:
    """Every piece of text a request carries to the model (instructions and
    input items, including tool outputs), joined, for assertions."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key in ("text", "content", "output", "arguments"):
                if key in value:
                    walk(value[key])

    walk(request.get("instructions"))
    walk(request.get("input"))
    return "\n".join(parts)
