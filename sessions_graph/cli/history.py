"""``sessions-graph import``: load the agent history recorded before the hooks.

Exit codes: 0 when every file was imported or skipped on purpose (another
user's session, no conversation in it), 1 when a file could not be imported
(unreadable, or refused by the store); the summary line is printed either way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sessions_graph.cli.common import Exit, echo, emit_json, fail, open_graph
from sessions_graph.cli.params import Argument, Option

if TYPE_CHECKING:
    from sessions_graph.hooks.history import FileResult


_PATHS = Argument(
    None,
    help="Transcript files or directories (default: ~/.claude/projects and ~/.codex/sessions).",
    metavar="PATH",
    show_default=False,
)
_USER = Option(None, "--user", "-u", help="User id (default: the configured user_id).")
_JSON = Option(False, "--json", help="Machine-readable summary.")


def import_(paths: list[str] = _PATHS, user: str = _USER, as_json: bool = _JSON) -> None:
    """Import Claude Code and Codex history with its original times (idempotent)."""
    from sessions_graph.hooks import history
    from sessions_graph.validation import check_optional_id

    check_optional_id(user, "user_id")
    if paths:
        files = history.find_transcripts(paths)
    else:
        sources = [p for p in history.default_sources() if p.is_dir()]
        if not sources:
            where = " or ".join(str(p) for p in history.default_sources())
            raise fail(f"no agent history found in {where}; name files or directories to import")
        files = history.find_transcripts(sources)
    with open_graph() as graph:
        user = user or graph.settings.user_id
        with _progress(len(files), quiet=as_json) as report:
            summary = history.import_history(graph, files, user, on_file=report)
    if as_json:
        emit_json(summary.as_dict())
    else:
        echo(summary.line())
    if summary.failed:
        raise Exit(1)


class _progress:
    """Reports each file: a progress bar on a terminal, one note line on stderr
    for each file skipped or failed (never the other user's name)."""

    def __init__(self, total: int, *, quiet: bool) -> None:
        self.total = total
        self.bar: Any = None
        self.task: Any = None
        self.quiet = quiet

    def __enter__(self) -> _progress:
        if sys.stderr.isatty() and self.total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self.bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("importing", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, result: FileResult) -> None:
        note = None
        if result.error:
            note = f"error: {_short(result.path)}: {result.error}"
        elif result.skipped:
            note = f"skipped {_short(result.path)}: {result.skipped}"
        notes = [note] if note else []
        notes += [f"warning: {w}" for w in result.warnings]
        for line in notes:
            line = " ".join(line.split())
            if self.bar is not None:
                self.bar.console.print(line, markup=False, highlight=False)
            else:
                echo(line, err=True)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=result.path.name[:40])


def _short(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
