"""Codex's hook trust, read and recorded through the real ``codex app-server``
(the Codex that ``.ci/run`` installs, or ``$CODEX_BIN``): no model is asked
and nothing leaves the machine, so each server takes a second or two.

Codex skips a hook until the user trusts its exact definition; install
trusts ours, and only ours, through Codex itself (``codex_trust``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import tomllib
from codex_harness import find_codex

from sessions_graph.hooks.codex_trust import (
    CodexTrustError,
    _AppServer,
    our_hooks,
    trust_our_hooks,
)
from sessions_graph.hooks.install import CODEX_EVENTS, install_hooks

CODEX = find_codex()
pytestmark = pytest.mark.skipif(CODEX is None, reason="codex not installed (.ci/run installs it)")

OURS = "/opt/bin/sessions-graph hook"
#: The user's own hook, in the same file: never trusted on their behalf.
THEIRS = {"type": "command", "command": "/usr/local/bin/audit-log --event stop"}


@pytest.fixture
def hooks_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's ``~/.codex/hooks.json`` with our hooks and one of theirs."""
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    path = codex_home / "hooks.json"
    install_hooks(path, CODEX_EVENTS, OURS)
    groups = json.loads(path.read_text())
    groups["hooks"]["Stop"].append({"hooks": [THEIRS]})
    path.write_text(json.dumps(groups))
    return path


def _trusted_keys(hooks_file: Path) -> set[str]:
    config = hooks_file.parent / "config.toml"
    if not config.exists():
        return set()
    state = tomllib.loads(config.read_text()).get("hooks", {}).get("state", {})
    return {key for key, value in state.items() if "trusted_hash" in value}


def test_only_our_hooks_are_trusted_and_a_changed_one_is_trusted_again(
    hooks_file: Path,
) -> None:
    home = hooks_file.parent.parent
    listed = our_hooks(hooks_file, home, CODEX)
    assert sorted(h.event for h in listed) == [
        "postToolUse",
        "preCompact",
        "sessionStart",
        "stop",
        "userPromptSubmit",
    ]
    assert all(h.key.startswith(f"{hooks_file}:") for h in listed)
    assert {h.trust for h in listed} == {"untrusted"}
    assert _trusted_keys(hooks_file) == set()

    trusted = trust_our_hooks(hooks_file, home, CODEX)
    assert {h.key for h in trusted} == {h.key for h in listed}
    # Recorded in the user's config for ours alone: the user's hook still waits for them.
    assert _trusted_keys(hooks_file) == {h.key for h in listed}
    assert {h.trust for h in our_hooks(hooks_file, home, CODEX)} == {"trusted"}
    assert trust_our_hooks(hooks_file, home, CODEX) == []  # nothing left to trust

    # Our command changed (a new install path): Codex holds it as modified, until trusted again.
    hooks_file.write_text(hooks_file.read_text().replace(OURS, "/new/bin/sessions-graph hook"))
    modified = our_hooks(hooks_file, home, CODEX)
    assert {h.trust for h in modified} == {"modified"}
    assert {h.key for h in trust_our_hooks(hooks_file, home, CODEX)} == {h.key for h in listed}
    assert {h.trust for h in our_hooks(hooks_file, home, CODEX)} == {"trusted"}


def test_our_hooks_of_another_file_are_not_listed_for_this_one(hooks_file: Path) -> None:
    """Codex lists every hook it loads; only those of the file install wrote count."""
    other = hooks_file.parent / "elsewhere" / "hooks.json"
    other.parent.mkdir()
    assert our_hooks(other, hooks_file.parent.parent, CODEX) == []
    with pytest.raises(CodexTrustError, match="does not list our hooks"):
        trust_our_hooks(other, hooks_file.parent.parent, CODEX)


def test_a_request_codex_refuses_is_one_error_naming_it(hooks_file: Path) -> None:
    with (
        _AppServer(CODEX) as server,
        pytest.raises(CodexTrustError, match="refused no/such-method"),
    ):
        server.call("no/such-method", {})


@pytest.mark.parametrize(
    ("binary", "said"),
    [
        # Runs and answers nothing: it ends before the request is read or after.
        ("/bin/false", "ended before answering initialize|closed its input"),
        ("/nonexistent/codex", "cannot run /nonexistent/codex"),
    ],
)
def test_a_codex_that_cannot_answer_is_one_error(hooks_file: Path, binary: str, said: str) -> None:
    with pytest.raises(CodexTrustError, match=said):
        our_hooks(hooks_file, hooks_file.parent.parent, binary)


def _our_app_servers() -> list[int]:
    """Children of this process that run ``codex app-server`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == os.getpid() and b"app-server" in cmdline:
            found.append(int(stat.parent.name))
    return found


def test_no_app_server_is_left_running_once_the_answer_is_in(hooks_file: Path) -> None:
    """Each call starts Codex's app server and ends it before returning: an
    install must not leave a server process behind."""
    assert our_hooks(hooks_file, hooks_file.parent.parent, CODEX)
    assert _our_app_servers() == []
