"""Codex's hook trust, read and recorded through Codex's own app server.

Codex (0.14x on) runs a non-managed hook only once the user has trusted its
exact definition: until then it skips it, and ``codex exec`` says nothing.
Trust is kept in the user's ``config.toml`` as
``[hooks.state."<key>"] trusted_hash = "sha256:..."``, keyed by the hook's
source file, event, group and handler, and the hash is Codex's own (of a
serialisation that is not ours to reproduce). So nothing here computes it:
``codex app-server`` (JSON-RPC over stdio, the protocol Codex's own clients
use) lists the hooks with their ``currentHash`` and ``trustStatus``
(``hooks/list``), and records trust the way Codex's ``/hooks`` screen does
(``config/batchWrite`` of that hash). Only hooks whose command is ours are
ever trusted.

The app server is marked experimental: every failure (no ``codex`` on PATH,
a protocol change, a timeout) is a ``CodexTrustError`` whose message the
caller shows next to the manual step (``/hooks`` in Codex).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessions_graph.errors import ConfigError
from sessions_graph.hooks.install import is_ours

#: How long the app server may take to answer (it starts in well under a second).
TIMEOUT_SECONDS = 30.0
#: What to tell a user whose hooks could not be trusted for them.
MANUAL_STEP = (
    "open Codex and run /hooks to review and trust them"
    " (or pass --dangerously-bypass-hook-trust to codex exec)"
)


class CodexTrustError(ConfigError):
    """Codex's hook trust could not be read or recorded."""


@dataclass(frozen=True)
class CodexHook:
    """One of our hooks as Codex sees it."""

    key: str
    event: str
    trust: str  # "trusted", "untrusted", "modified" or "managed"
    current_hash: str


def find_codex() -> str | None:
    """The ``codex`` binary on PATH, or None."""
    return shutil.which("codex")


def our_hooks(hooks_file: Path, cwd: Path, codex: str | None = None) -> list[CodexHook]:
    """Our hooks from ``hooks_file``, with the trust Codex holds for each."""
    with _AppServer(codex) as server:
        return _list(server, hooks_file, cwd)


def trust_our_hooks(hooks_file: Path, cwd: Path, codex: str | None = None) -> list[CodexHook]:
    """Record trust for each of our hooks in ``hooks_file`` that Codex holds as
    untrusted or modified; return those it trusted (checked by listing again)."""
    with _AppServer(codex) as server:
        listed = _list(server, hooks_file, cwd)
        if not listed:
            raise CodexTrustError(
                f"Codex does not list our hooks from {hooks_file}"
                " (a project's hooks load only once the project is trusted)"
            )
        pending = [h for h in listed if h.trust in ("untrusted", "modified")]
        if not pending:
            return []
        edits = [
            {
                # A quoted segment: the key holds a path, with dots and slashes.
                "keyPath": f"hooks.state.{json.dumps(h.key)}.trusted_hash",
                "value": h.current_hash,
                "mergeStrategy": "upsert",
            }
            for h in pending
        ]
        server.call("config/batchWrite", {"edits": edits})
        after = {h.key: h.trust for h in _list(server, hooks_file, cwd)}
    still = [h.key for h in pending if after.get(h.key) != "trusted"]
    if still:
        raise CodexTrustError(f"Codex did not record trust for {len(still)} hook(s)")
    return pending


def _list(server: _AppServer, hooks_file: Path, cwd: Path) -> list[CodexHook]:
    result = server.call("hooks/list", {"cwds": [str(cwd)]})
    source = os.path.realpath(hooks_file)
    hooks = []
    for entry in _field(result, "data", list):
        for hook in _field(entry, "hooks", list):
            if not isinstance(hook, dict) or not is_ours(hook.get("command")):
                continue
            if os.path.realpath(str(hook.get("sourcePath", ""))) != source:
                continue  # ours, but from another file (a project's, a plugin's)
            hooks.append(
                CodexHook(
                    key=str(hook.get("key")),
                    event=str(hook.get("eventName")),
                    trust=str(hook.get("trustStatus")),
                    current_hash=str(hook.get("currentHash")),
                )
            )
    return hooks


def _field(value: Any, name: str, kind: type) -> Any:
    found = value.get(name) if isinstance(value, dict) else None
    if not isinstance(found, kind):
        raise CodexTrustError(f"unexpected answer from codex app-server (no {name!r})")
    return found


class _AppServer:
    """``codex app-server`` on stdio, one request at a time."""

    def __init__(self, codex: str | None) -> None:
        binary = codex or find_codex()
        if binary is None:
            raise CodexTrustError("codex is not on PATH")
        self._binary = binary
        self._next_id = 0
        self._process: subprocess.Popen[str] | None = None
        # Lines are read by a thread, so that a silent server is a timeout,
        # not a hang (a pipe's buffered text defeats select()).
        self._lines: queue.Queue[str] = queue.Queue()

    def __enter__(self) -> _AppServer:
        try:
            self._process = subprocess.Popen(
                [self._binary, "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError as exc:
            raise CodexTrustError(f"cannot run {self._binary}: {exc.strerror or exc}") from None
        threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True).start()
        try:
            self.call("initialize", {"clientInfo": {"name": "sessions-graph", "version": "1"}})
            self._send({"method": "initialized"})
        except CodexTrustError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin:
            # End of input: the server exits. A server that already ended
            # leaves unsent text behind, whose flush fails: nothing to tell.
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")  # end of output

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        request_id = self._next_id
        self._send({"id": request_id, "method": method, "params": params})
        while True:  # notifications come in between; skip them
            try:
                line = self._lines.get(timeout=TIMEOUT_SECONDS)
            except queue.Empty:
                raise CodexTrustError(
                    f"codex app-server did not answer {method} within {TIMEOUT_SECONDS:.0f} s"
                ) from None
            if not line:
                raise CodexTrustError(f"codex app-server ended before answering {method}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("id") != request_id:
                continue
            if "error" in message:
                error = message["error"]
                detail = error.get("message") if isinstance(error, dict) else error
                raise CodexTrustError(f"codex app-server refused {method}: {detail}")
            return message.get("result")

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps(message) + "\n")
            self._process.stdin.flush()
        except OSError:
            raise CodexTrustError("codex app-server closed its input") from None
