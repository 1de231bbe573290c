"""Settings: defaults, then the config file, then the environment.

Hook processes often start without the user's shell variables, so every
setting can live in ``$XDG_CONFIG_HOME/sessions-graph/config.toml``; an
environment variable overrides the file. This module is a plain dataclass on
purpose: it is loaded by every hook call, and pydantic-settings alone costs
about 170 ms to import, twice the whole hook budget.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sessions_graph.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Settings whose values are secrets: never printed in full.
SECRET_KEYS = frozenset({"memgraph_password", "openai_api_key", "anthropic_api_key"})

#: Standard variables read besides ``SESSIONS_GRAPH_<KEY>``.
_STANDARD_ENV = {
    "memgraph_url": "MEMGRAPH_URL",
    "memgraph_host": "MEMGRAPH_HOST",
    "memgraph_port": "MEMGRAPH_PORT",
    "memgraph_user": "MEMGRAPH_USER",
    "memgraph_password": "MEMGRAPH_PASSWORD",
    "memgraph_database": "MEMGRAPH_DATABASE",
    "openai_api_key": "OPENAI_API_KEY",
    "openai_base_url": "OPENAI_BASE_URL",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
}


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_path() -> Path:
    """Where the config file lives (``SESSIONS_GRAPH_CONFIG`` overrides)."""
    explicit = os.environ.get("SESSIONS_GRAPH_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "sessions-graph" / "config.toml"


def _default_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, as in some containers
        return "default"


@dataclass
class Settings:
    """Every setting, with its default. Field names are the config-file keys."""

    engine: str = ""  # "embedded" | "memgraph"; empty: memgraph if configured
    db: str = field(
        default_factory=lambda: str(
            _xdg("XDG_DATA_HOME", ".local/share") / "sessions-graph" / "sessions.db"
        )
    )
    memgraph_url: str = ""
    memgraph_host: str = ""
    memgraph_port: int = 7687
    memgraph_user: str = ""
    memgraph_password: str = ""
    memgraph_database: str = ""
    user_id: str = field(default_factory=_default_user)
    auto_reconcile: bool = False
    llm_provider: str = ""  # "openai" | "anthropic"; empty: whichever key is set
    llm_model: str = ""
    openai_api_key: str = ""
    openai_base_url: str = ""
    anthropic_api_key: str = ""
    llm_concurrency: int = 4
    entity_workspace: str = "base"
    state_dir: str = field(
        default_factory=lambda: str(_xdg("XDG_STATE_HOME", ".local/state") / "sessions-graph")
    )

    @property
    def log_path(self) -> Path:
        return Path(self.state_dir) / "sessions-graph.log"

    @property
    def spool_dir(self) -> Path:
        return Path(self.state_dir) / "spool"

    @property
    def engine_name(self) -> str:
        if self.engine:
            return self.engine
        return "memgraph" if (self.memgraph_url or self.memgraph_host) else "embedded"

    @property
    def memgraph_uri(self) -> str:
        if self.memgraph_url:
            return self.memgraph_url
        return f"bolt://{self.memgraph_host or 'localhost'}:{self.memgraph_port}"

    def redacted(self) -> dict[str, Any]:
        """All settings as a dict, secrets shortened to their last 4 characters."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in SECRET_KEYS and value:
                value = "****" + value[-4:] if len(value) > 8 else "****"
            out[f.name] = value
        return out


KEYS = {f.name: f for f in fields(Settings)}


def coerce(key: str, raw: Any) -> Any:
    """Convert a raw value (from TOML or the environment) to the setting's type."""
    if key not in KEYS:
        raise ConfigError(f"unknown setting {key!r}; known: {', '.join(sorted(KEYS))}")
    kind = KEYS[key].type
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off", ""}:
            return False
        raise ConfigError(f"setting {key} expects true or false, got {raw!r}")
    if kind == "int":
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"setting {key} expects an integer, got {raw!r}") from None
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        raise ConfigError(f"setting {key} expects a string, got {raw!r}")
    return str(raw)


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The config file's settings ({} if there is none)."""
    path = path or config_path()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    return {key: coerce(key, value) for key, value in data.items()}


def load_settings(**overrides: Any) -> Settings:
    """Defaults < config file < environment < ``overrides`` (None values ignored)."""
    values = read_config_file()
    for key in KEYS:
        env = os.environ.get(f"SESSIONS_GRAPH_{key.upper()}")
        if env is None and key in _STANDARD_ENV:
            env = os.environ.get(_STANDARD_ENV[key])
        if env is not None:
            values[key] = coerce(key, env)
    values.update({k: coerce(k, v) for k, v in overrides.items() if v is not None})
    return Settings(**values)


def write_config_value(key: str, value: str | None, path: Path | None = None) -> Path:
    """Set (or with None, remove) one key in the config file, keeping the others."""
    path = path or config_path()
    current = read_config_file(path)
    if value is None:
        current.pop(key, None)
    else:
        current[key] = coerce(key, value)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# sessions-graph settings; environment variables override these.\n"]
    for k in sorted(current):
        v = current[k]
        if isinstance(v, bool):
            lines.append(f"{k} = {'true' if v else 'false'}\n")
        elif isinstance(v, int):
            lines.append(f"{k} = {v}\n")
        else:
            escaped = v.replace("\\", "\\\\").replace('"', '\\"')
            lines.append(f'{k} = "{escaped}"\n')
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    if any(k in SECRET_KEYS for k in current):
        os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path
