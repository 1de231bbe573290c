"""Settings: defaults, then the config file, then the environment.

Hook processes often start without the user's shell variables, so every
setting can live in ``$XDG_CONFIG_HOME/sessions-graph/config.toml``; an
environment variable overrides the file. This module is plain Python on
purpose: it is loaded by every hook call, and pydantic-settings alone costs
about 170 ms to import, twice the whole hook budget. For the same reason
``Settings`` is not a ``dataclasses`` dataclass (that module imports
``inspect``, several milliseconds of a hook's start-up) but a class with the
same declaration syntax, made by ``_settings_class``; and ``tomllib`` is
imported only when a config file exists.

Every value is checked when it is read (config file, environment, overrides)
and before ``config set`` writes it, so a bad value is one clear
``ConfigError`` naming where it came from, never a failure deep in a hook.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sessions_graph.errors import ConfigError, MemoryValidationError
from sessions_graph.validation import check_id, check_workspace

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

ENGINES = ("embedded", "memgraph")
#: Values of ``inject_projects``.
INJECT_PROJECTS = ("this", "labelled", "all")
#: URI schemes the Bolt driver serves; its HTTP ones are a preview it warns about.
MEMGRAPH_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

#: Characters an id may not contain (see ``validation.ID_PATTERN``).
_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9._:@-]")
#: Fallback user_id when nothing of the OS user name is usable.
DEFAULT_USER_ID = "default"


def _xdg(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_path() -> Path:
    """Where the config file lives (``SESSIONS_GRAPH_CONFIG`` overrides)."""
    explicit = os.environ.get("SESSIONS_GRAPH_CONFIG")
    if explicit:
        return Path(explicit)
    return _xdg("XDG_CONFIG_HOME", ".config") / "sessions-graph" / "config.toml"


def default_state_dir() -> Path:
    return _xdg("XDG_STATE_HOME", ".local/state") / "sessions-graph"


def user_id_from_name(name: str) -> str:
    """A valid user_id made from an OS user name: every character an id may not
    hold becomes ``_`` and leading characters that cannot start an id are
    dropped. A name that had to change gets 8 hex digits of its SHA-256, so
    that two different names never become one user (``josé`` and ``josè``
    both map to ``jos_``); ``user`` stands in when nothing is left."""
    mapped = _NOT_ID_CHAR.sub("_", name).lstrip("._:@-")
    if mapped == name and mapped:
        return mapped[:128]
    import hashlib  # rarely needed: only for a name that had to change

    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{(mapped or 'user')[:119]}-{digest}"


def _default_user() -> str:
    # The default must always be valid: an invalid one would make every hook
    # event fail for a user who never chose a user_id.
    import getpass  # with termios: only when no user_id is configured

    try:
        return user_id_from_name(getpass.getuser())
    except Exception:  # no passwd entry, as in some containers
        return DEFAULT_USER_ID


def split_url_userinfo(url: str) -> tuple[str, str, str]:
    """``(url without userinfo, user, password)`` of ``scheme://user:pass@host...``;
    user and password are percent-decoded, and empty when the URL has none."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url, "", ""
    # The last "@" ends the userinfo: people paste passwords with "#", "?",
    # "/" or "@" unencoded, and Bolt URLs carry no "@" after the host.
    userinfo, at, host = rest.rpartition("@")
    if not at:
        return url, "", ""
    from urllib.parse import unquote

    user, _, password = userinfo.partition(":")
    return f"{scheme}://{host}", unquote(user), unquote(password)


def redact_value(key: str, value: Any) -> Any:
    """``value`` as it may be shown: a secret shortened to its last 4
    characters, a URL's password replaced by ``****``."""
    if key in SECRET_KEYS and value:
        return "****" + value[-4:] if len(value) > 8 else "****"
    if key.endswith("_url") and isinstance(value, str):
        bare, user, password = split_url_userinfo(value)
        if password:
            scheme, _, rest = bare.partition("://")
            return f"{scheme}://{user}:****@{rest}"
    return value


class Field:
    """One setting: its name, its type as written (``"str"``, ``"int"``,
    ``"float"``, ``"bool"``) and its default (or a factory making it).
    (A plain class, not a NamedTuple: typing compiles a NamedTuple's string
    annotations, and a process's first compile() costs each hook several
    milliseconds, CPython building its syntax tree types.)"""

    __slots__ = ("default", "default_factory", "name", "type")

    def __init__(
        self,
        name: str,
        type: str,
        default: Any = None,
        default_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.name = name
        self.type = type  # as written: the annotations are strings here
        self.default = default
        self.default_factory = default_factory


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A setting whose default is computed when the settings are made."""
    return _Factory(default_factory)


def fields(cls_or_settings: Any) -> tuple[Field, ...]:
    """The settings' fields, in declaration order."""
    return cls_or_settings._fields


def _settings_class(cls: type) -> type:
    """Give ``cls`` what ``@dataclass`` would: keyword ``__init__`` filling
    defaults, ``__post_init__``, ``__eq__``, and a ``__repr__`` (which, unlike
    a dataclass's, never shows a secret)."""
    declared = []
    for name, kind in cls.__annotations__.items():
        default = cls.__dict__.get(name)
        if isinstance(default, _Factory):
            declared.append(Field(name, kind, default_factory=default.factory))
        else:
            declared.append(Field(name, kind, default))
    cls._fields = tuple(declared)
    for f in declared:
        if f.name in cls.__dict__:
            delattr(cls, f.name)

    def __init__(self: Any, **values: Any) -> None:
        unknown = set(values) - {f.name for f in declared}
        if unknown:
            raise TypeError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        for f in declared:
            if f.name in values:
                value = values[f.name]
            elif f.default_factory is not None:
                value = f.default_factory()
            else:
                value = f.default
            setattr(self, f.name, value)
        self.__post_init__()

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in declared)

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.redacted().items())
        return f"{type(self).__name__}({shown})"

    cls.__init__ = __init__  # type: ignore[misc]
    cls.__eq__ = __eq__  # type: ignore[method-assign,assignment]
    cls.__repr__ = __repr__  # type: ignore[method-assign,assignment]
    cls.__hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass
    return cls


@_settings_class
class Settings:
    """Every setting, with its default. Field names are the config-file keys.

    A ``memgraph_url`` may carry ``user:password@``: they fill
    ``memgraph_user`` / ``memgraph_password`` when those are unset, and
    ``memgraph_uri`` (what the driver gets, which refuses userinfo) drops them.
    """

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
    # -- the local extractor ----------------------------------------------
    #: "llm" (LightRAG), "local" (no LLM: patterns and an optional
    #: named-entity model), or "auto": llm when an LLM is configured, else local.
    extractor: str = "auto"
    state_dir: str = field(default_factory=lambda: str(default_state_dir()))
    # Context the hook hands back to the agent (hooks/inject.py), in tokens
    # (estimated at 4 characters each); 0 turns that event's injection off.
    inject_session_start_tokens: int = 1200
    inject_prompt_tokens: int = 600
    #: Which projects a prompt's recalled context may come from: ``this``
    #: (this project's, and memories saved with no project), ``labelled``
    #: (another project's too, above a higher floor, named by its project)
    #: or ``all`` (every project's at the same floor, named).
    inject_projects: str = "labelled"
    # -- interactions and feedback (sessions_graph.interactions) ----------
    #: Seconds an Interaction is kept (the short-term cache); 0 keeps them.
    #: What their ratings taught (the feedback weights) outlives them.
    session_cache_ttl_s: int = 7 * 24 * 3600
    #: How far one rating moves an element's weight (the EMA's alpha).
    feedback_alpha: float = 0.3
    #: How much the feedback weight bends recall's ranking: 0 is the
    #: ranking without feedback, exactly. 0.02: on LoCoMo's dev split the
    #: largest tried that keeps the unrated questions' R@5 within 0.005 (0.03
    #: lost 0.008), rated ones gaining 0.005 (README, bench_feedback.py).
    feedback_influence: float = 0.02
    #: Whether an injected item the reply used counts as a good rating of it.
    implicit_feedback: bool = False

    def __post_init__(self) -> None:
        _, user, password = split_url_userinfo(self.memgraph_url)
        self.memgraph_user = self.memgraph_user or user
        self.memgraph_password = self.memgraph_password or password

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
        """The server's URI without credentials (they go to the driver apart)."""
        if self.memgraph_url:
            return split_url_userinfo(self.memgraph_url)[0]
        return f"bolt://{self.memgraph_host or 'localhost'}:{self.memgraph_port}"

    def redacted(self) -> dict[str, Any]:
        """All settings as a dict, secrets shortened to their last 4 characters
        and a URL's password masked."""
        return {f.name: redact_value(f.name, getattr(self, f.name)) for f in fields(self)}


KEYS = {f.name: f for f in fields(Settings)}


def environment_names(*, llm_keys: bool = True) -> list[str]:
    """Every environment variable the settings read (``SESSIONS_GRAPH_<KEY>``,
    the standard ones, ``SESSIONS_GRAPH_CONFIG`` and the XDG base
    directories): what a process started with a filtered environment (Codex
    starts MCP servers so) must be given to see the same settings as its
    parent. ``llm_keys=False`` leaves out the LLM providers' API keys."""
    skipped = {"openai_api_key", "anthropic_api_key"} if not llm_keys else set()
    names = ["SESSIONS_GRAPH_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"]
    for key in KEYS:
        if key in skipped:
            continue
        names.append(f"SESSIONS_GRAPH_{key.upper()}")
        if key in _STANDARD_ENV:
            names.append(_STANDARD_ENV[key])
    return names


def _check_choice(value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(f"expected one of {', '.join(choices)}, got {value!r}")
    return value


def _check_engine(value: str) -> str:
    if value and value not in ENGINES:
        raise ConfigError(f"expected one of {', '.join(ENGINES)} (or empty), got {value!r}")
    return value


def _check_memgraph_url(value: str) -> str:
    if not value:
        return value
    scheme, sep, rest = split_url_userinfo(value)[0].partition("://")
    if not sep or scheme.lower() not in MEMGRAPH_SCHEMES or not rest or rest[0] in "/?#:":
        raise ConfigError(
            f"expected a URL such as bolt://host:7687 (schemes: {', '.join(MEMGRAPH_SCHEMES)}),"
            f" got {redact_value('memgraph_url', value)!r}"
        )
    return value


#: Settings that name a file or directory; empty means the default.
_PATH_KEYS = ("db", "state_dir")

#: The range of each integer setting.
_INT_RANGES = {
    "memgraph_port": (1, 65_535),
    "llm_concurrency": (1, 100),
    "session_cache_ttl_s": (0, 100 * 365 * 24 * 3600),
}
#: The range of each number setting (all of them shares, from 0 to 1).
_FLOAT_RANGES = {"feedback_alpha": (0.01, 1.0), "feedback_influence": (0.0, 1.0)}

#: Value checks beyond the type, per setting; each returns the value or raises.
_CHECKS: dict[str, Callable[[str], str]] = {
    "user_id": lambda v: check_id(v, "user_id"),
    "engine": _check_engine,
    "memgraph_url": _check_memgraph_url,
    "entity_workspace": check_workspace,
    "extractor": lambda v: _check_choice(v, ("auto", "llm", "local")),
    "inject_projects": lambda v: _check_choice(v, INJECT_PROJECTS),
}


def coerce(key: str, raw: Any, source: str = "") -> Any:
    """Convert a raw value (from TOML or the environment) to the setting's type
    and check it; ``source`` (where the value came from) goes in the error."""
    if key not in KEYS:
        raise ConfigError(f"unknown setting {key!r}; known: {', '.join(sorted(KEYS))}")
    where = f" (from {source})" if source else ""
    kind = KEYS[key].type
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off", ""}:
            return False
        raise ConfigError(f"setting {key} expects true or false, got {raw!r}{where}")
    if kind == "int":
        try:
            number = int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"setting {key} expects an integer, got {raw!r}{where}") from None
        low, high = _INT_RANGES.get(key, (-(2**63), 2**63 - 1))
        if not low <= number <= high:
            raise ConfigError(f"setting {key} must be from {low} to {high}, got {number}{where}")
        return number
    if kind == "float":
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"setting {key} expects a number, got {raw!r}{where}") from None
        low, high = _FLOAT_RANGES[key]
        if not low <= number <= high:  # nan fails too
            raise ConfigError(f"setting {key} must be from {low:g} to {high:g}, got {raw!r}{where}")
        return number
    if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
        raise ConfigError(f"setting {key} expects a string, got {raw!r}{where}")
    value = str(raw)
    try:
        # A lone surrogate (undecodable bytes in an environment variable) can
        # be neither written to the file nor sent to a server.
        value.encode("utf-8")
        return _CHECKS[key](value) if key in _CHECKS else value
    except UnicodeEncodeError:
        raise ConfigError(f"setting {key} is not valid UTF-8 text{where}") from None
    except (ConfigError, MemoryValidationError) as exc:
        raise ConfigError(f"setting {key}: {exc}{where}") from None


def read_config_toml(path: Path) -> dict[str, Any]:
    """The config file's table as written, unchecked ({} if there is none)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}  # the usual case for hooks: no TOML parser is loaded
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The config file's settings ({} if there is none), checked."""
    path = path or config_path()
    source = f"config file {path}"
    return {key: coerce(key, value, source) for key, value in read_config_toml(path).items()}


def load_settings(**overrides: Any) -> Settings:
    """Defaults < config file < environment < ``overrides`` (None values ignored)."""
    values = read_config_file()
    for key in KEYS:
        name = f"SESSIONS_GRAPH_{key.upper()}"
        env = os.environ.get(name)
        if env is None and key in _STANDARD_ENV:
            name = _STANDARD_ENV[key]
            env = os.environ.get(name)
        if env is not None:
            values[key] = coerce(key, env, f"environment variable {name}")
    values.update({k: coerce(k, v) for k, v in overrides.items() if v is not None})
    for key in _PATH_KEYS:
        # An empty path (``SESSIONS_GRAPH_STATE_DIR=``) means the default, not
        # the current directory: that is the agent's project, where a hook
        # would otherwise leave its log and spool.
        if values.get(key) == "":
            del values[key]
    return Settings(**values)


def state_dir_despite_errors() -> Path:
    """The state directory when the settings as a whole do not load (a bad
    value elsewhere): the one setting the hook still needs, to keep the event."""
    env = os.environ.get("SESSIONS_GRAPH_STATE_DIR")
    if env:
        return Path(env)
    try:
        value = read_config_toml(config_path()).get("state_dir")
    except ConfigError:
        value = None
    return Path(value) if isinstance(value, str) and value else default_state_dir()


#: TOML basic-string escapes with a short form; other control characters get \uXXXX.
_TOML_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: quotes, backslashes and every control
    character (U+0000-U+001F, U+007F) escaped, so any text reads back the same."""
    out = []
    for ch in value:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(key: str, value: Any, path: Path) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    raise ConfigError(f"cannot rewrite {key} = {value!r} in {path}: edit the file by hand")


def _holds_secret(values: dict[str, Any]) -> bool:
    return any(
        (k in SECRET_KEYS and v)
        or (k.endswith("_url") and isinstance(v, str) and split_url_userinfo(v)[2])
        for k, v in values.items()
    )


def write_config_value(key: str, value: str | None, path: Path | None = None) -> Path:
    """Set (or with None, remove) one key in the config file, keeping the others.

    The new value is checked first; the others are kept as written, even if
    invalid, so that ``config set`` / ``unset`` can repair a bad file.
    """
    path = path or config_path()
    current = read_config_toml(path)
    if value is None:
        current.pop(key, None)
    else:
        current[key] = coerce(key, value)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# sessions-graph settings; environment variables override these.\n"]
    lines += [f"{k} = {_toml_value(k, current[k], path)}\n" for k in sorted(current)]
    tmp = path.with_name(f".{path.name}.tmp")
    secret = _holds_secret(current)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # a leftover would keep its mode: O_CREAT below must create it
    # Created 0600 when it holds a secret, so it is never readable by others,
    # not even for a moment; otherwise the umask decides, as for any file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if secret else 0o666)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    os.replace(tmp, path)
    return path
