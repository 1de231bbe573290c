"""``SessionsGraphMemoryTool`` driven by the Anthropic SDK's own tool runner,
against a scripted Messages API on loopback (no network): what the model's
``tool_use`` does to the store, and what ``tool_result`` goes back to it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import pytest
from cli_process import CHECKOUT

from sessions_graph import SessionsGraph
from sessions_graph.agent import SessionsGraphMemoryTool


class ScriptedMessagesAPI:
    """Answers ``POST /v1/messages`` with the next scripted content (one JSON
    message, as the API does for a request without ``stream``); records bodies."""

    def __init__(self, replies: list[list[dict[str, Any]]]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # the http.server API names it so
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                api.requests.append(body)
                content = api.replies.pop(0) if api.replies else [{"type": "text", "text": "ok"}]
                stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
                message = {
                    "id": f"msg_{len(api.requests)}",
                    "type": "message",
                    "role": "assistant",
                    "model": body["model"],
                    "content": content,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
                data = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def api() -> Iterator[ScriptedMessagesAPI]:
    def use(tool_id: str, **command: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": "memory", "input": command}

    fake = ScriptedMessagesAPI(
        [
            [use("t1", command="view", path="/memories")],
            [use("t2", command="create", path="/memories/prefs.md", file_text="Prefers tabs\n")],
            [use("t3", command="view", path="/memories/../../etc/passwd")],
            [{"type": "text", "text": "Noted: you prefer tabs."}],
        ]
    )
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def _results(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def test_the_sdk_tool_runner_uses_the_store(tmp_path: Path, api: ScriptedMessagesAPI) -> None:
    graph = SessionsGraph(db=str(tmp_path / "runner.db"))
    graph.setup()
    memory = SessionsGraphMemoryTool(graph, user_id="alice", session_id="s-app-1")
    client = anthropic.Anthropic(api_key="test-key", base_url=api.url, max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5",
        max_tokens=512,
        tools=[memory],
        messages=[{"role": "user", "content": "Remember that I prefer tabs."}],
    )
    final = runner.until_done()

    assert [b.text for b in final.content if b.type == "text"] == ["Noted: you prefer tabs."]
    assert len(api.requests) == 4
    assert api.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    (empty,) = _results(api.requests[1])
    assert not empty.get("is_error") and _text(empty).endswith("0\t/memories")
    (created,) = _results(api.requests[2])
    assert created["tool_use_id"] == "t2" and not created.get("is_error")
    assert _text(created) == "File created successfully at: /memories/prefs.md"
    (refused,) = _results(api.requests[3])
    assert refused["is_error"] is True and "'..' segment" in _text(refused)

    # The file is a Memory of alice, written by the app's session.
    found = graph.search_memories("alice", "tabs")
    assert [(m.content, m.session_id) for m in found] == [("Prefers tabs\n", "s-app-1")]
    graph.close()


def test_without_the_sdk_the_import_says_what_to_install() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "try:\n    from sessions_graph.agent import SessionsGraphMemoryTool\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert f"pip install '{CHECKOUT}[memory-tool]'" in result.stdout


def test_the_cli_lists_files_and_their_versions(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "cli.db"
    with SessionsGraph(db=str(db)) as graph:
        graph.setup()
        tool = SessionsGraphMemoryTool(graph, user_id="alice", session_id="s-1")
        tool.call({"command": "create", "path": "/memories/prefs.md", "file_text": "tabs\n"})
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/prefs.md",
                "old_str": "tabs",
                "new_str": "spaces",
            }
        )
    script = str(Path(sys.executable).parent / "sessions-graph")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [script, "--db", str(db), "memory", *args, "--user", "alice"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    listed = json.loads(cli("files", "--json").stdout)
    assert [(f["path"], f["version"]) for f in listed] == [("/memories/prefs.md", 2)]
    kept = json.loads(cli("versions", "/memories/prefs.md", "--json").stdout)
    assert [(v["version"], v["content"], v["session_id"]) for v in kept] == [
        (2, "spaces\n", "s-1"),
        (1, "tabs\n", "s-1"),
    ]
    for bad in ("/memories/none.md", "/etc/passwd"):
        refused = cli("versions", bad)
        assert refused.returncode == 1 and refused.stderr.count("\n") == 1
