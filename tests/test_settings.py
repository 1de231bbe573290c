"""Settings: the default user_id, value checks, the config file writer, and
Memgraph credentials given in the URL."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from sessions_graph.errors import ConfigError
from sessions_graph.settings import (
    KEYS,
    Settings,
    coerce,
    load_settings,
    read_config_file,
    user_id_from_name,
    write_config_value,
)
from sessions_graph.validation import check_id


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("alice", "alice"),
        ("josé", "jos_-d994e1d0"),
        ("josè", "jos_-9fec3e04"),
        ("first last", "first_last-2f809857"),
        ("DOMAIN\\bob", "DOMAIN_bob-e680180e"),
        ("_svc", "svc-73fe61d9"),
        ("-.x", "x-f60e0012"),
        ("ééé", "user-355b7226"),
        ("", "user-e3b0c442"),
        ("a" * 300, "a" * 128),
    ],
)
def test_default_user_id_is_the_os_name_made_valid(name: str, expected: str) -> None:
    assert user_id_from_name(name) == expected
    check_id(expected, "user_id")


def test_different_names_never_become_one_user() -> None:
    names = ["josé", "josè", "jos_", "first last", "first_last", "иван", "мария", "田中"]
    assert len({user_id_from_name(n) for n in names}) == len(names)


def test_the_default_user_id_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(var, "josé")
    assert Settings().user_id == "jos_-d994e1d0"
    assert load_settings().user_id == "jos_-d994e1d0"


#: Hostile but, where a setting has rules, valid values: every key is covered.
HOSTILE: dict[str, list[str]] = {
    "engine": ["memgraph", ""],
    "memgraph_url": ['bolt+s://u:p"#\\\\w@host:7687', "neo4j://h#x"],
    "user_id": ["a.b@c:d-e", "X" * 128],
    "entity_workspace": ["_ws_1"],
    "memgraph_port": ["7688"],
    "llm_concurrency": ["16"],
    "auto_reconcile": ["true", "false"],
    "extractor": ["local", "llm", "auto"],
    "inject_session_start_tokens": ["0", "4000"],
    "inject_prompt_tokens": ["600"],
    "inject_projects": ["this", "labelled", "all"],
    "session_cache_ttl_s": ["0", "86400"],
    "feedback_alpha": ["0.3", "1"],
    "feedback_influence": ["0", "0.25"],
    "implicit_feedback": ["false", "true"],
}
_TEXT = [
    "a\nb",
    'say "hi" # not a comment',
    "C:\\path\\to\\",
    "ünï©ødé ✓ 𝄞",
    "\t\r\x00\x1b\x7f\x08\x0c",
    "'''",
    '"""',
    "\\u0041",
]


def _hostile(key: str) -> list[str]:
    return HOSTILE.get(key, _TEXT)


def test_every_setting_round_trips_through_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    for key in KEYS:
        for value in _hostile(key):
            write_config_value(key, value, path)
            assert read_config_file(path)[key] == coerce(key, value), (key, value)
    every = {key: coerce(key, _hostile(key)[0]) for key in KEYS}
    for key, value in every.items():
        write_config_value(key, str(value).lower() if isinstance(value, bool) else str(value), path)
    assert read_config_file(path) == every


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("user_id", "josé", "invalid user_id"),
        ("user_id", "", "invalid user_id"),
        ("engine", "postgres", "embedded, memgraph"),
        ("memgraph_url", "http://localhost:7474", "bolt://host:7687"),
        ("memgraph_url", "localhost:7687", "bolt://host:7687"),
        ("memgraph_url", "bolt://", "bolt://host:7687"),
        ("memgraph_url", "bolt://:7687", "bolt://host:7687"),
        ("entity_workspace", "my-space", "entity workspace"),
        ("memgraph_port", "seven", "integer"),
        ("auto_reconcile", "maybe", "true or false"),
        ("llm_model", "\udcff", "UTF-8"),
        ("extractor", "spacy", "auto, llm, local"),
        ("inject_projects", "others", "this, labelled, all"),
        ("feedback_influence", "1.5", "from 0 to 1"),
        ("feedback_influence", "nan", "from 0 to 1"),
        ("feedback_alpha", "a lot", "a number"),
        ("session_cache_ttl_s", "-1", "from 0"),
    ],
)
def test_bad_values_are_refused_before_writing(
    tmp_path: Path, key: str, value: str, needle: str
) -> None:
    path = tmp_path / "config.toml"
    with pytest.raises(ConfigError, match=needle):
        write_config_value(key, value, path)
    assert not path.exists()


def test_a_bad_value_on_load_names_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SESSIONS_GRAPH_USER_ID", "bad id")
    with pytest.raises(ConfigError, match="environment variable SESSIONS_GRAPH_USER_ID"):
        load_settings()
    monkeypatch.delenv("SESSIONS_GRAPH_USER_ID")
    monkeypatch.setenv("MEMGRAPH_URL", "http://h:7474")
    with pytest.raises(ConfigError, match="environment variable MEMGRAPH_URL"):
        load_settings()
    monkeypatch.delenv("MEMGRAPH_URL")
    path = tmp_path / "config" / "sessions-graph" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('engine = "postgres"\n')
    with pytest.raises(ConfigError, match=f"setting engine: .* \\(from config file {path}\\)"):
        load_settings()


def test_a_file_holding_a_bad_value_can_be_repaired(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('user_id = "josé"\nllm_model = "m"\n')
    write_config_value("db", "/x.db", path)  # the other values are kept as written
    assert 'user_id = "josé"' in path.read_text()
    write_config_value("user_id", None, path)
    assert read_config_file(path) == {"db": "/x.db", "llm_model": "m"}


SECRET_URL = "bolt://admin:SuperSecret99@db.example:7687"


def test_credentials_in_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings(memgraph_url=SECRET_URL)
    assert s.memgraph_uri == "bolt://db.example:7687"  # the driver refuses userinfo
    assert (s.memgraph_user, s.memgraph_password) == ("admin", "SuperSecret99")
    explicit = Settings(memgraph_url=SECRET_URL, memgraph_user="u", memgraph_password="pw")
    assert (explicit.memgraph_user, explicit.memgraph_password) == ("u", "pw")
    encoded = Settings(memgraph_url="neo4j+s://me%40corp:p%3Aw%2Fd@h/db?x=1")
    assert (encoded.memgraph_user, encoded.memgraph_password) == ("me@corp", "p:w/d")
    assert encoded.memgraph_uri == "neo4j+s://h/db?x=1"
    assert Settings(memgraph_url="bolt://h:1").memgraph_uri == "bolt://h:1"
    monkeypatch.setenv("MEMGRAPH_URL", SECRET_URL)
    loaded = load_settings()
    assert loaded.engine_name == "memgraph" and loaded.memgraph_password == "SuperSecret99"


def test_redacted_masks_a_url_password() -> None:
    shown: dict[str, Any] = Settings(memgraph_url=SECRET_URL).redacted()
    assert shown["memgraph_url"] == "bolt://admin:****@db.example:7687"
    assert "SuperSecret99" not in repr(shown)
    assert (
        Settings(memgraph_url="bolt://admin@h:1").redacted()["memgraph_url"] == "bolt://admin@h:1"
    )


@pytest.mark.parametrize("password", ["pa#ss", "p/w?x", "p@ss:w"])
def test_an_unencoded_password_is_still_a_password(tmp_path: Path, password: str) -> None:
    """People paste passwords unencoded; the last "@" ends them, and they are
    masked and kept private like any other."""
    url = f"bolt://neo4j:{password}@db.example:7687"
    s = Settings(memgraph_url=url)
    assert (s.memgraph_user, s.memgraph_password) == ("neo4j", password)
    assert s.memgraph_uri == "bolt://db.example:7687"
    assert password not in repr(s.redacted())
    path = write_config_value("memgraph_url", url, tmp_path / "config.toml")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_config_file_holding_a_url_password_is_private(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    write_config_value("db", "/x.db", path)
    write_config_value("memgraph_url", "bolt://h:7687", path)
    write_config_value("memgraph_url", SECRET_URL, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    write_config_value("llm_model", "m", path)  # rewritten: still private
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
