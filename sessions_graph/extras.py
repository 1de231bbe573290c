"""How to install an optional extra, said the way this installation can take it.

sessions-graph is not on PyPI: it is installed from a checkout of its
repository, so ``pip install 'sessions-graph[mcp]'`` would fail (or fetch
another project of that name). Every hint that names an install command asks
this module, which names the checkout this copy came from: the directory
holding the running package when it is one (an editable install, or the
package run from its tree), else the directory pip recorded for the
installed distribution (``direct_url.json``, PEP 610). When neither is known
the hint says to run the command in the checkout.

Standard library only, and only ever imported on an error or a hint's path.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "sessions-graph"


def checkout() -> Path | None:
    """The sessions-graph checkout this copy was installed from, or None."""
    tree = Path(__file__).resolve().parent.parent
    pyproject = tree / "pyproject.toml"
    try:
        if f'name = "{DISTRIBUTION}"' in pyproject.read_text(encoding="utf-8"):
            return tree
    except OSError:
        pass  # installed into site-packages: ask pip's record
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        record = distribution(DISTRIBUTION).read_text("direct_url.json")
    except (PackageNotFoundError, OSError, ValueError):
        return None
    try:
        url = json.loads(record or "")
    except ValueError:
        return None
    # Only a directory install names a checkout (a wheel's url is the wheel).
    if not isinstance(url, dict) or "dir_info" not in url or not isinstance(url.get("url"), str):
        return None
    parsed = urlparse(url["url"])
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def pip_install(extra: str) -> str:
    """The command that installs ``extra`` from the checkout, e.g.
    ``pip install '/home/me/sessions-graph[mcp]'``."""
    where = checkout()
    if where is None:
        return f"pip install '.[{extra}]' in your sessions-graph checkout"
    return f"pip install {shlex.quote(f'{where}[{extra}]')}"


def pipx_install() -> str:
    """The command that installs the ``sessions-graph`` command on ``PATH``."""
    where = checkout()
    if where is None:
        return "pipx install . in your sessions-graph checkout"
    return f"pipx install {shlex.quote(str(where))}"
