"""Which project a working directory belongs to, read from the file system
alone: no ``git`` subprocess (tens of milliseconds a hook cannot spend), only
a walk up to the git root and one read of its ``config``.

A project's identity (its *key*) is its ``origin`` remote's URL where it has
one (another remote's if it has no ``origin``), without scheme, user,
password and ``.git``: two clones of one repository are one project,
wherever they sit. Without a remote it is the git root's full path, and
outside git the directory's own full path. So ``w1/clientA/api`` and
``w2/clientB/api`` are two projects, though both are called ``api``: the
*name* (the root's base name, or the remote's last part) is only what people
read.

Stores written before this carry the base name as the key (``legacy``):
``SessionsGraph.adopt_legacy_project`` moves those sessions and memories,
the ones whose working directory lies under this root, to the full key at
the next SessionStart in the project (see docs/hooks.md).
"""

# No ``from __future__ import annotations``: typing.NamedTuple compiles a
# string annotation, and the first compile() of a process costs each hook
# several milliseconds (CPython builds its syntax tree types for it).
import re
from pathlib import Path
from typing import NamedTuple

#: The largest git config read, in bytes: a remote is declared near the top,
#: and a hook must not read a huge file someone put there.
MAX_CONFIG_BYTES = 256 * 1024

#: Sources, compiled by ``re`` when a git config is first read: every hook
#: imports this module, few read a config.
_SECTION = r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]'
_OTHER_SECTION = r"^\s*\["
_URL = r"(?i)^\s*url\s*=\s*(.*?)\s*$"
#: scp-like git URLs: ``git@github.com:acme/api.git``.
_SCP = r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$"


class Project(NamedTuple):
    """A directory's project: ``key`` (its identity), ``name`` (shown),
    ``root`` (the git root, or the directory outside git) and ``legacy``
    (the key stores written before remotes and full paths used)."""

    key: str
    name: str
    root: str
    legacy: str


def project_of(cwd: str | None) -> Project | None:
    """The project of ``cwd``, or None for no directory."""
    if not cwd:
        return None
    path = Path(cwd)
    for candidate in (path, *path.parents):
        marker = candidate / ".git"
        try:
            if not marker.exists():
                continue
        except OSError:  # a name too long for the OS: not a directory here
            continue
        root = str(candidate)
        remote = _remote_url(_git_dir(marker))
        key = normalise_remote(remote) if remote else root
        return Project(key, _name(key) or candidate.name or root, root, candidate.name or root)
    if not path.name:
        return Project(str(path), str(path), str(path), str(path))
    return Project(str(path), path.name, str(path), path.name)


def project_key(cwd: str | None) -> str | None:
    """The key of ``cwd``'s project (see ``project_of``), or None."""
    project = project_of(cwd)
    return project.key if project else None


def project_name(key: str | None) -> str | None:
    """What a project key is shown as: its last path part."""
    return _name(key) if key else None


def _name(key: str) -> str:
    return key.rstrip("/").rsplit("/", 1)[-1]


def _git_dir(marker: Path) -> Path:
    """The directory holding the repository's config: ``.git`` itself, or for a
    worktree or submodule (``.git`` is a file ``gitdir: ...``) the directory
    it names, or that one's common directory (a worktree's)."""
    if marker.is_dir():
        return marker
    try:
        text = marker.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return marker
    if not text.startswith("gitdir:"):
        return marker
    git_dir = (marker.parent / text[len("gitdir:") :].strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir
    return (git_dir / common).resolve() if common else git_dir


def _remote_url(git_dir: Path) -> str | None:
    """The URL of the ``origin`` remote, else of the first remote, else None."""
    try:
        with open(git_dir / "config", "rb") as fh:
            text = fh.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    remote: str | None = None
    urls: dict[str, str] = {}
    for line in text.splitlines():
        section = re.match(_SECTION, line)
        if section:
            remote = section.group(1)
            continue
        if re.match(_OTHER_SECTION, line):
            remote = None
            continue
        url = re.match(_URL, line)
        if remote is not None and url and url.group(1):
            urls.setdefault(remote, url.group(1).strip('"'))
    return urls.get("origin") or next(iter(urls.values()), None)


def normalise_remote(url: str) -> str:
    """A remote URL as a project key: ``host/path`` without scheme, user,
    password (a token must never be stored), port, ``.git`` and trailing
    slashes; ``git@host:path`` and ``https://host/path`` give the same key. A
    local path stays a path."""
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if sep:
        if scheme.lower() == "file":
            return _bare(rest)
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2].split(":", 1)[0].lower()
        return _bare(f"{host}/{path}")
    scp = re.match(_SCP, url)
    if scp and not url.startswith(("/", ".", "~")):
        return _bare(f"{scp.group(1).lower()}/{scp.group(2).lstrip('/')}")
    return _bare(url)


def _bare(key: str) -> str:
    key = key.rstrip("/")
    return key[: -len(".git")] if key.endswith(".git") else key
