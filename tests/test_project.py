"""A directory's project, read from the file system: the git remote where
there is one, else the git root's full path, else the directory's."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessions_graph.project import normalise_remote, project_key, project_of


def _repo(root: Path, remote: str | None = None, name: str = "origin") -> Path:
    (root / ".git").mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if remote:
        config += (
            f'[remote "{name}"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/{name}/*\n'
        )
    config += '[branch "main"]\n\tremote = origin\n'
    (root / ".git" / "config").write_text(config)
    return root


def test_two_repositories_of_one_name_are_two_projects(tmp_path: Path) -> None:
    a = _repo(tmp_path / "w1" / "clientA" / "api")
    b = _repo(tmp_path / "w2" / "clientB" / "api")
    (a / "src").mkdir()
    pa, pb = project_of(str(a / "src")), project_of(str(b))
    assert pa is not None and pb is not None
    assert pa.key == str(a) and pb.key == str(b) and pa.key != pb.key
    assert pa.name == pb.name == "api"
    assert pa.legacy == pb.legacy == "api"  # what stores written before used


def test_a_remote_names_the_project_wherever_it_is_cloned(tmp_path: Path) -> None:
    one = _repo(tmp_path / "one" / "api", "git@github.com:acme/api.git")
    two = _repo(tmp_path / "two" / "service", "https://github.com/acme/api")
    other = _repo(tmp_path / "x", "https://github.com/acme/web.git", name="upstream")
    assert project_key(str(one)) == project_key(str(two)) == "github.com/acme/api"
    assert project_of(str(two)).name == "api"  # type: ignore[union-attr]
    assert project_key(str(other)) == "github.com/acme/web"  # no origin: the remote there is


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://user:ghp_secret@github.com/acme/api.git", "github.com/acme/api"),
        ("ssh://git@gitlab.example.com:2222/team/api.git/", "gitlab.example.com/team/api"),
        ("git@GitHub.com:acme/api.git", "github.com/acme/api"),
        ("/srv/git/api.git", "/srv/git/api"),
        ("file:///srv/git/api.git", "/srv/git/api"),
    ],
)
def test_remote_urls_lose_scheme_credentials_and_suffix(url: str, key: str) -> None:
    assert normalise_remote(url) == key


def test_a_worktree_is_its_repository_s_project(tmp_path: Path) -> None:
    main = _repo(tmp_path / "api", "git@github.com:acme/api.git")
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    tree = tmp_path / "api-feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    assert project_key(str(tree)) == "github.com/acme/api"


def test_outside_git_the_directory_itself(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    assert project_key(str(plain)) == str(plain)
    assert project_key(None) is None
    assert project_key("/x" * 3000) == "/x" * 3000  # too long for the OS to look up
