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


def test_set_writes_any_text_readably(tmp_path: Path) -> None:
    """A newline used to be written raw: an unreadable file, every hook skipped."""
    for value in ("a\nb", 'q"\\#x', "tab\there\x7f", "ünï ✓"):
        assert _cli("set", "llm_model", value).returncode == 0
        got = _cli("get", "llm_model")
        assert got.returncode == 0 and got.stdout == value + "\n", got.stderr


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("user_id", "josé", "invalid user_id"),
        ("engine", "sqlite", "embedded, memgraph"),
        ("memgraph_url", "http://localhost:7474", "bolt://host:7687"),
        ("entity_workspace", "my-space", "entity workspace"),
    ],
)
def test_set_refuses_bad_values(tmp_path: Path, key: str, value: str, needle: str) -> None:
    result = _cli("set", key, value)
    assert result.returncode != 0 and needle in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "config" / "sessions-graph" / "config.toml").exists()


def test_a_bad_environment_value_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSIONS_GRAPH_USER_ID", "josé")
    result = _cli("list")
    assert result.returncode != 0 and result.stderr.count("\n") == 1
    assert "SESSIONS_GRAPH_USER_ID" in result.stderr and "invalid user_id" in result.stderr


def test_a_memgraph_url_password_is_never_shown_and_the_file_is_private(tmp_path: Path) -> None:
    url = "bolt://admin:SuperSecret99@db.example:7687"
    result = _cli("set", "memgraph_url", url)
    assert result.returncode == 0 and "SuperSecret99" not in result.stdout
    assert "bolt://admin:****@db.example:7687" in result.stdout
    for args in (
        ("list",),
        ("list", "--json"),
        ("get", "memgraph_url"),
        ("get", "memgraph_password"),
    ):
        shown = _cli(*args)
        assert shown.returncode == 0 and "SuperSecret99" not in shown.stdout, args
    assert _cli("get", "memgraph_url", "--reveal").stdout.strip() == url
    path = tmp_path / "config" / "sessions-graph" / "config.toml"
    assert path.stat().st_mode & 0o777 == 0o600
