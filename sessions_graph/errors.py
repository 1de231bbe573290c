"""The package's own exceptions.

Every error a user can cause or observe is one of these, so that callers can
catch ``SessionsGraphError`` and the CLI and hooks can print one clean line.
"""

from __future__ import annotations


class SessionsGraphError(Exception):
    """Base class of every error sessions-graph raises on purpose."""


class MemoryValidationError(SessionsGraphError, ValueError):
    """A field (an id, a content, a limit) is not acceptable; nothing was written."""


class MemoryIdTakenError(MemoryValidationError):
    """A memory was saved with a ``memory_id`` already in use; nothing was written."""


class MemoryFileError(MemoryValidationError):
    """A memory-file command cannot be done (no such file, the path is taken,
    a path outside /memories); nothing was written. Its message is written
    for the model that sent the command."""


class InvalidQueryError(SessionsGraphError, ValueError):
    """A search query is not in the supported Tantivy query syntax."""


class StoreError(SessionsGraphError):
    """The storage engine failed; the message carries the engine's own words."""


class StoreUnavailableError(StoreError):
    """The store cannot be reached or opened (server down, path unwritable)."""


class StoreBusyError(StoreUnavailableError):
    """The store is locked by another process for longer than this caller may
    wait (a hook's budget); it is not down, and will be free again soon."""


class StoreMigrationPendingError(StoreBusyError):
    """The store's schema is older than this build's, and this caller (a
    hook, with its second of budget) does not migrate it: migrating may take
    minutes on a large store. Busy, not down: a detached process or
    ``setup`` migrates it, and what waited is applied then."""


class ConfigError(SessionsGraphError):
    """A setting is missing or malformed."""


class ReconciliationNotConfiguredError(ConfigError):
    """Reconciliation needs an LLM and none is configured."""


def quiet_driver_logs() -> None:
    """Keep the Bolt driver's log records off stderr, where every error is one
    line. Its logger has no handler of its own, so ``logging``'s last-resort
    handler would print each failed routing attempt ("Unable to retrieve
    routing information", six of them before our own line); the error they
    end in reaches the user once, as ours. Called before a command opens
    Memgraph, never on the embedded path (which does not load ``logging``)."""
    import logging

    logging.getLogger("neo4j").addHandler(logging.NullHandler())
