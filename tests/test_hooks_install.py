"""install-hooks: writes every event, keeps what was there, idempotent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sessions_graph.hooks.install import CLAUDE_EVENTS, install_hooks, is_ours

SCRIPT = str(Path(sys.executable).parent / "sessions-graph")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=60)


def test_install_project_keeps_other_keys_and_is_idempotent(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    other_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(ls:*)"]},
                "model": "opus",
                "hooks": {
                    "PreToolUse": [other_hook],
                    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
                },
            }
        )
    )
    first = _cli("install-hooks", "--project", str(tmp_path))
    assert first.returncode == 0, first.stderr
    for event in CLAUDE_EVENTS:
        assert event in first.stdout
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(ls:*)"]} and data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == [other_hook]
    stop_commands = [h["command"] for g in data["hooks"]["Stop"] for h in g["hooks"]]
    assert stop_commands[0] == "say done" and is_ours(stop_commands[1])
    for event in CLAUDE_EVENTS:
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if is_ours(h["command"])]
        assert len(ours) == 1
        # Absolute path: hook processes may not have the venv on PATH.
        assert ours[0]["command"].startswith("/")
    assert data["hooks"]["PostToolUse"][-1]["matcher"] == "*"

    before = settings.read_bytes()
    second = _cli("install-hooks", "--project", str(tmp_path))
    assert second.returncode == 0
    assert "nothing changed" in second.stdout
    assert settings.read_bytes() == before


def test_install_user_uses_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    result = _cli("install-hooks", "--user")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".claude" / "settings.json").is_file()
    codex = _cli("install-hooks", "--user", "--codex")
    assert codex.returncode == 0
    hooks = json.loads((tmp_path / ".codex" / "hooks.json").read_text())["hooks"]
    assert "SessionEnd" not in hooks and "Stop" in hooks


def test_install_updates_an_old_command_in_place(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    old = {"hooks": [{"type": "command", "command": "/old/venv/bin/sessions-graph hook"}]}
    settings.write_text(json.dumps({"hooks": {"Stop": [old]}}))
    changes = install_hooks(settings, ("Stop",), "/new/bin/sessions-graph hook")
    assert changes == ["Stop: updated command to /new/bin/sessions-graph hook"]
    data = json.loads(settings.read_text())
    assert data["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "/new/bin/sessions-graph hook"}]}
    ]


def test_install_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    broken = _cli("install-hooks", "--project", str(tmp_path))
    assert broken.returncode != 0
    assert broken.stderr.count("\n") == 1 and "not valid JSON" in broken.stderr
    both = _cli("install-hooks", "--project", str(tmp_path), "--user")
    assert both.returncode == 2 and "either" in both.stderr
    missing = _cli("install-hooks", "--project", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def test_is_ours() -> None:
    assert is_ours("/x/bin/sessions-graph hook")
    assert is_ours("'/a b/python' -m sessions_graph hook")
    assert not is_ours("sessions-graph reconcile")
    assert not is_ours("./guard.sh")
    assert not is_ours(None)
