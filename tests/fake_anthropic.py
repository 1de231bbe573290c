"""A scripted Anthropic Messages API on localhost, for running the real Claude
Code CLI offline (no tests here).

Each conversation turn goes: the model says a line and calls ``Bash``; once
the tool result is back, it answers. Requests without tools (titles, topic
checks) get a short text. Responses stream as server-sent events when asked,
as the real API does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = "We picked Redis for the cache: the compose file pins redis 7."
COMMAND = "echo redis:7-alpine"


def _events(blocks: list[dict[str, Any]], stop: str) -> bytes:
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events)


def _reply(body: dict[str, Any], turn: int) -> tuple[list[dict[str, Any]], str]:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content")
    answered = isinstance(content, list) and any(
        isinstance(c, dict) and c.get("type") == "tool_result" for c in content
    )
    if not body.get("tools"):
        return [{"type": "text", "text": "Cache database"}], "end_turn"
    if answered:
        return [{"type": "text", "text": ANSWER}], "end_turn"
    call = {
        "type": "tool_use",
        "id": f"toolu_fake{turn:04d}",
        "name": "Bash",
        "input": {"command": COMMAND, "description": "Show the cache image"},
    }
    return [{"type": "text", "text": "Let me check the compose file."}, call], "tool_use"


class _Handler(BaseHTTPRequestHandler):
    turns = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, data: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(b"{}", "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if "count_tokens" in self.path:
            self._send(json.dumps({"input_tokens": 10}).encode(), "application/json")
            return
        _Handler.turns += 1
        blocks, stop = _reply(body, _Handler.turns)
        if body.get("stream"):
            self._send(_events(blocks, stop), "text/event-stream")
            return
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        self._send(json.dumps(message).encode(), "application/json")


@contextmanager
def fake_messages_api() -> Iterator[str]:
    """A running server; yields its base URL (for ``ANTHROPIC_BASE_URL``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
