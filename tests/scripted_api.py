"""What the scripted model APIs share (``claude_harness.FakeAnthropic``,
``codex_harness.FakeResponses``): an HTTP server on loopback in a thread of
its own, the queue of scripted replies, and the record of every request,
so that a test can read what reached the model. Each subclass speaks its
API's wire format (``_handler``) and says what an unscripted reply is
(``_default``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from typing_extensions import Self


class ScriptedAPI:
    """A local model API with scripted replies; records every request."""

    #: What the API's URL ends with (the base URL the client is given).
    BASE_PATH = ""

    def __init__(self, default_reply: str = "OK.") -> None:
        self.requests: list[dict[str, Any]] = []
        self.default_reply = default_reply
        self._script: list[list[dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.BASE_PATH}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def then(self, *items: dict[str, Any]) -> Self:
        """Queue the next reply to a conversation request (one with tools):
        its content blocks or output items. Unscripted requests get
        ``default_reply``."""
        self._script.append(list(items))
        return self

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The requests of the agent's own conversation (they offer tools),
        not side requests such as a title or a memory summary."""
        return [r for r in self.requests if r.get("tools")]

    def _reply_to(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if body.get("tools") and self._script:
                return self._script.pop(0)
        return [self._default(self.default_reply)]

    def _default(self, reply: str) -> dict[str, Any]:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError
