"""``sessions-graph config get|set|unset|list|path``.

Settings live in ``$XDG_CONFIG_HOME/sessions-graph/config.toml`` because hook
processes often start without the user's shell variables. ``list`` and
``get`` show secrets shortened (``Settings.redacted``) unless ``--reveal``;
a URL's password is masked the same way. ``set`` checks the value before
writing it; ``set`` and ``unset`` work on a file holding a bad value, so that
it can be repaired.
"""

from __future__ import annotations

import json
from typing import Any

from sessions_graph.cli.common import cli_settings, echo, fail
from sessions_graph.cli.params import Argument, Option
from sessions_graph.settings import (
    KEYS,
    coerce,
    config_path,
    read_config_toml,
    redact_value,
    write_config_value,
)


def _key(key: str) -> str:
    """The setting name for ``key`` (``memgraph-url`` works too), or exit 2."""
    name = key.strip().lower().replace("-", "_")
    if name not in KEYS:
        raise fail(f"unknown setting {key!r}; known: {', '.join(sorted(KEYS))}", code=2)
    return name


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def get(
    key: str = Argument(..., help="Setting name, e.g. db or memgraph_url."),
    reveal: bool = Option(False, "--reveal", help="Print a secret in full."),
) -> None:
    """Print a setting's effective value (defaults < config file < environment)."""
    name = _key(key)
    settings = cli_settings()  # --db is part of the effective value
    value = getattr(settings, name) if reveal else settings.redacted()[name]
    echo(_show(value))


def set_(
    key: str = Argument(..., help="Setting name."),
    value: str = Argument(..., help="New value."),
) -> None:
    """Write a setting to the config file (checked first: a bad value is refused)."""
    name = _key(key)
    path = write_config_value(name, value)
    echo(f"{name} = {_show(redact_value(name, coerce(name, value)))}  ({path})")


def unset(key: str = Argument(..., help="Setting name.")) -> None:
    """Remove a setting from the config file (its default applies again)."""
    name = _key(key)
    path = config_path()
    if name not in read_config_toml(path):
        echo(f"{name} is not set in {path}")
        return
    write_config_value(name, None, path)
    echo(f"removed {name} from {path}")


def list_(as_json: bool = Option(False, "--json", help="Machine-readable output.")) -> None:
    """Every setting's effective value; secrets shortened to their last 4 characters."""
    values = cli_settings().redacted()
    if as_json:
        echo(json.dumps(values, indent=2))
        return
    width = max(len(k) for k in values)
    for name, value in values.items():
        echo(f"{name:<{width}} = {_show(value)}")


def path() -> None:
    """Print where the config file is (it may not exist yet)."""
    echo(str(config_path()))
