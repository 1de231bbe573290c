"""Install hints name the checkout sessions-graph was installed from: it is
not on PyPI, so ``pip install 'sessions-graph[mcp]'`` would not work."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from cli_process import CHECKOUT


def _installed_copy(site: Path, direct_url: dict[str, object] | None) -> None:
    """The package as a non-editable install leaves it: in a site directory
    with no pyproject.toml beside it, and pip's record of where it came from."""
    shutil.copytree(CHECKOUT / "sessions_graph", site / "sessions_graph")
    info = site / "sessions_graph-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sessions-graph\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def _hint(site: Path) -> str:
    code = "from sessions_graph.extras import pip_install; print(pip_install('mcp'))"
    result = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_an_installed_copy_names_the_directory_pip_installed_it_from(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _installed_copy(site, {"url": "file:///home/me/src/my%20sessions-graph", "dir_info": {}})

    assert _hint(site) == "pip install '/home/me/src/my sessions-graph[mcp]'"


def test_without_a_record_of_the_checkout_the_hint_says_where_to_run_it(tmp_path: Path) -> None:
    """A wheel's record names the wheel, not a checkout."""
    site = tmp_path / "site"
    _installed_copy(site, {"url": "file:///tmp/sessions_graph-0.1.0.whl", "archive_info": {}})

    assert _hint(site) == "pip install '.[mcp]' in your sessions-graph checkout"


def test_run_from_its_tree_the_hint_names_that_tree() -> None:
    from sessions_graph.extras import pip_install

    assert pip_install("ui") == f"pip install '{CHECKOUT}[ui]'"
