"""``SessionsGraphMemoryTool``: the Anthropic SDK's memory tool, stored in
sessions-graph.

The memory tool (``memory_20250818``) lets Claude keep files under
``/memories`` across conversations; the SDK runs it through a backend class
(``BetaAbstractMemoryTool``). This backend keeps each file as a Memory of
the user (``sessions_graph.agent.memory_files``), so what the model writes
there is searched and recalled with every other memory, on either engine,
with its last 20 versions kept::

    from anthropic import Anthropic
    from sessions_graph import SessionsGraph
    from sessions_graph.agent import SessionsGraphMemoryTool

    memory = SessionsGraphMemoryTool(SessionsGraph(), user_id="alice", session_id="s-1")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-5", max_tokens=1024, tools=[memory],
        messages=[{"role": "user", "content": "Remember that I prefer tabs."}],
    )

Every failure the model can cause (a path outside ``/memories``, ``..``, a
file too large, text that is not there) is the tool's error result
(``ToolError``), which the SDK hands back to the model to correct itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sessions_graph.agent.memory_files import (
    KEEP_VERSIONS,
    ROOT,
    MemoryFile,
    MemoryFiles,
    MemoryFileVersion,
    normalize_path,
)
from sessions_graph.errors import SessionsGraphError
from sessions_graph.extras import pip_install

try:
    from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    raise ImportError(
        f"SessionsGraphMemoryTool needs the Anthropic SDK: {pip_install('memory-tool')}"
    ) from exc

if TYPE_CHECKING:
    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )

    from sessions_graph.graph import SessionsGraph

#: How deep a directory view lists, in levels below the viewed directory.
VIEW_DEPTH = 2
#: Width of the line numbers in a file view.
_NUMBER_WIDTH = 6
#: Lines of context shown around an edit.
_SNIPPET_CONTEXT = 2


class SessionsGraphMemoryTool(BetaAbstractMemoryTool):
    """The memory tool's files, kept as the memories of ``user_id``.

    ``graph`` defaults to ``SessionsGraph()`` (engine from the settings);
    ``user_id`` to the configured one. ``session_id``, when given, is recorded
    as the session that created a file and, per version, that wrote it.
    """

    def __init__(
        self,
        graph: SessionsGraph | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        if graph is None:
            from sessions_graph.graph import SessionsGraph

            graph = SessionsGraph()
        self.graph = graph
        self.files = MemoryFiles(graph, user_id or graph.settings.user_id, session_id)

    # -- what the application may ask besides the model ------------------------------
    def versions(self, path: str, limit: int = KEEP_VERSIONS) -> list[MemoryFileVersion]:
        """The kept versions of a file, newest first (at most 20 are kept)."""
        return self.files.versions(path, limit)

    def get(self, path: str) -> MemoryFile | None:
        """The file at ``path`` with its version and Memory, or None."""
        return self.files.get(path)

    # -- the tool's commands ------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        with _as_tool_errors():
            path = normalize_path(command.path)
            found = self.files.get(path)
            if found is not None:
                return _numbered(found, getattr(command, "view_range", None))
            listing = self.files.listing(path)
            if path != ROOT and not listing:
                raise ToolError(f"The path {path} does not exist. View {ROOT} to see the files.")
            return _directory(path, listing)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        with _as_tool_errors():
            created = self.files.create(command.path, command.file_text)
            return f"File created successfully at: {created.path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        old, new = command.old_str, command.new_str

        def change(text: str) -> tuple[str, int]:
            count = text.count(old) if old else 0
            if count == 0:
                raise ToolError(
                    f"No replacement was made: old_str {old!r} does not appear verbatim in"
                    f" {command.path}."
                )
            if count > 1:
                lines = _lines_of(text, old)
                raise ToolError(
                    f"No replacement was made: old_str {old!r} appears {count} times (lines"
                    f" {', '.join(map(str, lines))}) in {command.path}; make it unique."
                )
            return text.replace(old, new, 1), text[: text.index(old)].count("\n")

        with _as_tool_errors():
            written, line = self.files.edit(command.path, change)
            return (
                "The memory file has been edited. The changed part, with line numbers:\n"
                + _snippet(written.content, line, new.count("\n"))
            )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        at = command.insert_line

        def change(text: str) -> tuple[str, None]:
            lines = text.split("\n")
            if lines[-1] == "":  # a final newline ends the last line; it is no line
                lines.pop()
            if not isinstance(at, int) or not 0 <= at <= len(lines):
                raise ToolError(
                    f"Invalid insert_line {at!r}: it must be from 0 (the top) to {len(lines)}"
                    f" (after the last line) for {command.path}."
                )
            lines[at:at] = command.insert_text.rstrip("\n").split("\n")
            return "\n".join(lines) + "\n", None

        with _as_tool_errors():
            written, _ = self.files.edit(command.path, change)
            return f"The file {written.path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        with _as_tool_errors():
            count = self.files.delete(command.path)
            suffix = "" if count == 1 else f" ({count} files)"
            return f"Successfully deleted {normalize_path(command.path)}{suffix}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        with _as_tool_errors():
            self.files.rename(command.old_path, command.new_path)
            old, new = normalize_path(command.old_path), normalize_path(command.new_path)
            return f"Successfully renamed {old} to {new}"

    def clear_all_memory(self) -> str:
        """Delete every memory file of the user (other memories stay)."""
        with _as_tool_errors():
            if self.files.listing(ROOT):
                self.files.delete_all()
            return "All memory cleared"


@contextmanager
def _as_tool_errors() -> Iterator[None]:
    """Turn the package's errors into the tool's error results: the model reads
    the one-line message and can correct its command."""
    try:
        yield
    except SessionsGraphError as exc:
        raise ToolError(" ".join(str(exc).split())) from None


def _numbered(file: MemoryFile, view_range: Any) -> str:
    lines = file.content.split("\n")
    first, shown = 1, lines
    if view_range:
        if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
            raise ToolError("view_range is [first_line, last_line] (last_line -1: to the end)")
        start, end = view_range
        # An end past the last line shows to the end, as -1 does.
        end = len(lines) if end == -1 else min(end, len(lines))
        if not 1 <= start <= len(lines) or end < start:
            raise ToolError(
                f"Invalid view_range {list(view_range)}: {file.path} has {len(lines)} lines."
            )
        first, shown = start, lines[start - 1 : end]
    body = "\n".join(f"{n:>{_NUMBER_WIDTH}}\t{line}" for n, line in enumerate(shown, first))
    return f"Here's the content of {file.path} with line numbers:\n{body}"


def _directory(path: str, listing: list[dict[str, Any]]) -> str:
    """Files and directories up to ``VIEW_DEPTH`` levels below ``path``, with
    sizes (characters; a directory's is the sum of its files)."""
    sizes: dict[str, int] = {}
    for item in listing:
        parts = item["path"][len(path) + 1 :].split("/")
        for depth in range(1, min(len(parts), VIEW_DEPTH) + 1):
            is_dir = depth < len(parts)
            key = f"{path}/{'/'.join(parts[:depth])}" + ("/" if is_dir else "")
            sizes[key] = sizes.get(key, 0) + item["size"]
    total = sum(item["size"] for item in listing)
    rows = [f"{_human(total)}\t{path}"] + [f"{_human(n)}\t{p}" for p, n in sorted(sizes.items())]
    return (
        f"Here are the files and directories up to {VIEW_DEPTH} levels deep in {path}:\n"
        + "\n".join(rows)
    )


def _human(size: int) -> str:
    if size < 1024:
        return str(size)
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}K"
    return f"{size / (1024 * 1024):.1f}M"


def _lines_of(text: str, needle: str) -> list[int]:
    lines, start = [], text.find(needle)
    while start != -1:
        lines.append(text[:start].count("\n") + 1)
        start = text.find(needle, start + 1)
    return lines


def _snippet(text: str, line: int, extra_lines: int) -> str:
    lines = text.split("\n")
    start = max(0, line - _SNIPPET_CONTEXT)
    end = min(len(lines), line + extra_lines + _SNIPPET_CONTEXT + 1)
    return "\n".join(f"{n + 1:>{_NUMBER_WIDTH}}\t{lines[n]}" for n in range(start, end))
