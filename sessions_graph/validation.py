"""Input checks shared by every engine, run before anything touches storage.

Kept free of pydantic so that the hook path can validate ids cheaply.
"""

from __future__ import annotations

import re

from sessions_graph.errors import ConfigError, MemoryValidationError

#: Ids (user, session, memory, action) are 1-128 characters: letters, digits and
#: ``. _ : @ -``, starting with a letter or digit. That covers UUIDs, e-mail-like
#: user names and runtime ids, and keeps ids inert in logs, paths and queries.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")

#: An entity workspace becomes a node label on Memgraph (LightRAG's shape),
#: the one part of a query that cannot be a parameter: letters, digits, '_'.
WORKSPACE_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

#: Largest Memory content accepted, in bytes of UTF-8.
MAX_CONTENT_BYTES = 100_000

#: Largest ``limit`` a read accepts; protects callers from accidental full scans.
MAX_LIMIT = 10_000
#: Bounds of a reconciliation run's options. A lease is renewed every third
#: of its length: under a second it would renew in a busy loop; past a day, a
#: killed run's sessions and chunks would stay claimed (and a run waiting on
#: them stuck) for that long. More LLM calls at once only earn rate limits.
MIN_LEASE_SECONDS, MAX_LEASE_SECONDS = 1.0, 86_400.0
MAX_CONCURRENCY = 100
#: Values of the ``extractor`` setting and of a reconciliation run's option:
#: ``auto`` is the LLM when one is configured and usable, else ``local``.
EXTRACTOR_CHOICES = ("auto", "llm", "local")

# Control characters other than tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_id(value: object, field: str) -> str:
    """Return ``value`` if it is a valid id, else raise ``MemoryValidationError``."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise MemoryValidationError(
            f"invalid {field} {shown}: expected 1-128 characters of letters, digits"
            " and . _ : @ -, starting with a letter or digit"
        )
    return value


def check_extractor(value: object) -> str:
    """Return ``value`` if it names an extractor choice, else raise ``ConfigError``."""
    if value not in EXTRACTOR_CHOICES:
        raise ConfigError(f"extractor must be one of {', '.join(EXTRACTOR_CHOICES)}, got {value!r}")
    return value  # type: ignore[return-value]


def check_optional_id(value: object, field: str) -> str | None:
    return None if value is None else check_id(value, field)


def check_content(value: object) -> str:
    """Return the content unchanged if acceptable for a Memory."""
    if not isinstance(value, str):
        raise MemoryValidationError(f"content must be a string, not {type(value).__name__}")
    if not value.strip():
        raise MemoryValidationError("content is empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: not text any store can hold
        raise MemoryValidationError("content is not valid Unicode text") from None
    if size > MAX_CONTENT_BYTES:
        raise MemoryValidationError(
            f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes"
        )
    if _CONTROL.search(value):
        raise MemoryValidationError("content contains control characters")
    return value


def check_limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise MemoryValidationError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    return value


def check_workspace(value: object) -> str:
    """Return ``value`` if it is a valid entity workspace name."""
    if not isinstance(value, str) or not WORKSPACE_PATTERN.fullmatch(value):
        raise MemoryValidationError(
            f"invalid entity workspace {value!r}: expected a letter or '_' followed by"
            " up to 63 letters, digits or '_'"
        )
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with lone UTF-16 surrogates (valid in JSON, not in UTF-8, so
    unstorable) replaced by U+FFFD: agents' output is recorded, not judged."""
    return _SURROGATE.sub("\ufffd", text)
