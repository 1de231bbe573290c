"""``sessions-graph config``: real processes, the isolated config file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = str(Path(sys.executable).parent / "sessions-graph")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, "config", *args], capture_output=True, text=True, timeout=60)


def test_path_set_get_unset(tmp_path: Path) -> None:
    path = _cli("path")
    assert path.returncode == 0
    expected = tmp_path / "config" / "sessions-graph" / "config.toml"
    assert path.stdout.strip() == str(expected)

    assert _cli("set", "db", str(tmp_path / "x.db")).returncode == 0
    assert _cli("set", "auto-reconcile", "yes").returncode == 0
    assert _cli("get", "db").stdout.strip() == str(tmp_path / "x.db")
    assert _cli("get", "auto_reconcile").stdout.strip() == "true"
    assert "auto_reconcile = true" in expected.read_text()

    unset = _cli("unset", "auto_reconcile")
    assert unset.returncode == 0 and "removed" in unset.stdout
    assert _cli("get", "auto_reconcile").stdout.strip() == "false"
    assert "not set" in _cli("unset", "auto_reconcile").stdout


def test_environment_overrides_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _cli("set", "user_id", "alice").returncode == 0
    monkeypatch.setenv("SESSIONS_GRAPH_USER_ID", "bob")
    assert _cli("get", "user_id").stdout.strip() == "bob"


def test_list_never_prints_secrets_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    assert secret not in _cli("set", "openai_api_key", secret).stdout
    monkeypatch.setenv("MEMGRAPH_PASSWORD", "hunter2-long-password")
    listing = _cli("list")
    assert listing.returncode == 0
    assert secret not in listing.stdout and "cdef" in listing.stdout
    assert "hunter2" not in listing.stdout
    assert "db " in listing.stdout and "user_id" in listing.stdout
    assert secret not in _cli("list", "--json").stdout
    assert secret not in _cli("get", "openai_api_key").stdout
    assert _cli("get", "openai_api_key", "--reveal").stdout.strip() == secret


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("get", "nope"), "unknown setting"),
        (("set", "nope", "1"), "unknown setting"),
        (("set", "auto_reconcile", "maybe"), "true or false"),
        (("set", "memgraph_port", "abc"), "integer"),
    ],
)
def test_errors_are_one_line_and_nonzero(args: tuple[str, ...], needle: str) -> None:
    result = _cli(*args)
    assert result.returncode != 0
    assert needle in result.stderr
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_broken_config_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config" / "sessions-graph" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("db = [unclosed\n")
    result = _cli("list")
    assert result.returncode != 0 and "cannot read config file" in result.stderr
    assert result.stderr.count("\n") == 1
