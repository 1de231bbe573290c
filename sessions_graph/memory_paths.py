"""Where Memory Files live and what their paths and texts may be: the rules
the memory tool's commands (``agent.memory_files``) and ``SessionsGraph.
save_memory(path=...)`` share, below both, so that a file saved either way is
the same file."""

from __future__ import annotations

import re

from sessions_graph.errors import MemoryFileError, MemoryValidationError
from sessions_graph.validation import MAX_CONTENT_BYTES, check_content

#: The one directory the memory tool works in.
ROOT = "/memories"
#: Versions kept per file (the newest); older ones are deleted as new come.
KEEP_VERSIONS = 20
#: Longest path accepted, in characters.
MAX_PATH_CHARS = 1024

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalize_path(path: object) -> str:
    """``path`` as stored: ``/memories`` or ``/memories/a/b``, no trailing
    slash. Refuses anything outside ``/memories``, ``.`` / ``..`` segments,
    empty segments, backslashes and control characters."""
    if not isinstance(path, str) or not path:
        raise MemoryFileError("a path is required, e.g. /memories/notes.md")
    if len(path) > MAX_PATH_CHARS:
        raise MemoryFileError(f"the path is longer than {MAX_PATH_CHARS} characters")
    if _CONTROL.search(path) or "\\" in path:
        raise MemoryFileError(f"the path {path!r} holds control characters or backslashes")
    trimmed = path.rstrip("/") or "/"
    if trimmed != ROOT and not trimmed.startswith(ROOT + "/"):
        raise MemoryFileError(f"the path {path} is outside {ROOT}: every path starts with {ROOT}/")
    segments = trimmed[len(ROOT) + 1 :].split("/") if trimmed != ROOT else []
    if any(s in ("", ".", "..") for s in segments):
        raise MemoryFileError(
            f"the path {path} has an empty, '.' or '..' segment: use plain names under {ROOT}"
        )
    return trimmed


def parents(path: str) -> list[str]:
    """The directories above ``path`` inside ``/memories`` (not ``/memories`` itself)."""
    segments = path[len(ROOT) + 1 :].split("/")
    return [ROOT + "/" + "/".join(segments[:i]) for i in range(1, len(segments))]


def check_file_text(text: object, path: str) -> str:
    """File text as a Memory's content: not empty, at most ``MAX_CONTENT_BYTES``."""
    if not isinstance(text, str):
        raise MemoryFileError("the file text must be a string")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTENT_BYTES:
        raise MemoryFileError(
            f"{path} would be {size} bytes; a memory file holds at most {MAX_CONTENT_BYTES}"
            " bytes: split it into several files"
        )
    try:
        return check_content(text)
    except MemoryValidationError as exc:
        raise MemoryFileError(f"{path}: {exc}") from None


def missing_message(path: str) -> str:
    return f"The path {path} does not exist. View {ROOT} to see the files there."


def conflict_message(outcome: str, path: str) -> str:
    if outcome == "exists":
        return f"{path} already exists: view it, or choose another path"
    if outcome == "directory":
        return f"{path} is a directory (files are under it): choose another path"
    return f"a parent of {path} is a file: a file cannot hold other files"
