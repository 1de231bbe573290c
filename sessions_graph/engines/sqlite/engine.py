"""``SQLiteEngine``: the connection and its plumbing (write and read
transactions, the wait budget, mapping SQLite's errors to the package's),
the lifecycle (setup, drop, close, status) and the database file's
permissions. What the engine does with the data is in the concern mixins it
is made of, which reach this plumbing through ``self``."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sessions_graph.engines.base import Engine, Record
from sessions_graph.engines.sqlite.digests import Digests
from sessions_graph.engines.sqlite.forget import Forget
from sessions_graph.engines.sqlite.injections import Injections
from sessions_graph.engines.sqlite.interactions import Interactions
from sessions_graph.engines.sqlite.memories import Memories
from sessions_graph.engines.sqlite.memory_files import MemoryFiles
from sessions_graph.engines.sqlite.recall import Recall
from sessions_graph.engines.sqlite.reconcile import Reconcile
from sessions_graph.engines.sqlite.schema import SCHEMA_VERSION, migrate
from sessions_graph.engines.sqlite.sessions import Sessions
from sessions_graph.errors import StoreBusyError, StoreError, StoreUnavailableError

#: How long a writer waits for the lock before giving up, in milliseconds.
BUSY_TIMEOUT_MS = 30_000
#: What a connection past its wait budget still waits, in milliseconds:
#: enough for another process's short transaction, too little to stall a hook.
DEADLINE_GRACE_MS = 100
#: Bytes of WAL kept after a checkpoint resets it (SQLite's auto-checkpoint
#: fires at 1,000 pages, about 4 MB).
JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024


class SQLiteEngine(
    Memories,
    Sessions,
    MemoryFiles,
    Reconcile,
    Recall,
    Injections,
    Digests,
    Interactions,
    Forget,
    Engine,
):
    """The embedded engine over the SQLite file at ``path``."""

    name = "embedded"

    def __init__(
        self,
        path: str | Path,
        *,
        wait_budget: float | None = None,
        checkpoint_on_close: bool = True,
        migrate_existing: bool = True,
    ) -> None:
        """``wait_budget``: seconds from now after which this connection no
        longer waits for a lock (beyond a short grace), so that a hook spends
        a bounded time on a locked file and spools its event instead
        (``StoreBusyError``); None: every write waits up to ``BUSY_TIMEOUT_MS``.

        ``checkpoint_on_close=False`` is for short-lived processes (hooks):
        closing the last connection normally checkpoints the WAL into the
        database (four fdatasync calls) and deletes it, only for the next hook
        process to create it again. Without it the WAL is left in place:
        SQLite reads it back on the next open, exactly as after a crash, and
        the automatic checkpoint (every 1,000 pages) still folds it in.

        ``migrate_existing=False`` is for hooks too: a file with an older
        schema is not migrated here (``StoreMigrationPendingError``; the hook
        spools its event and a detached replay migrates); a new file still
        gets its schema.
        """
        self.path = Path(path).expanduser()
        self._lock = threading.RLock()
        self._deadline = None if wait_budget is None else time.monotonic() + wait_budget
        self._busy_ms = self._wait_ms()
        self._checkpoint_on_close = checkpoint_on_close
        self._migrate_existing = migrate_existing
        try:
            _create_private(self.path)
            _writable_sidecars(self.path)
            self._conn = sqlite3.connect(
                self.path,
                timeout=self._busy_ms / 1000,
                isolation_level=None,  # we issue BEGIN / COMMIT ourselves
                check_same_thread=False,  # guarded by self._lock instead
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailableError(f"cannot open database {self.path}: {exc}") from None
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            # A WAL that a big transaction grew is cut back to this size when
            # it is next reset, since hook processes no longer delete it.
            self._conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            self._migrate()
        except sqlite3.Error as exc:  # e.g. "file is not a database"
            self._conn.close()
            raise _store_error(exc, self.path) from None
        except StoreError:
            self._conn.close()
            raise

    # -- plumbing -----------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken with the write lock up front."""
        with self._lock:
            try:
                if self._deadline is not None and (busy := self._wait_ms()) != self._busy_ms:
                    self._conn.execute(f"PRAGMA busy_timeout = {busy}")
                    self._busy_ms = busy
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _store_error(exc, self.path) from None
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:  # the driver's words, as the package's error
                self._rollback()
                raise _store_error(exc, self.path) from None
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may have rolled back already (an I/O error, a full disk); a
        # second rollback's error must not hide the first one.
        if self._conn.in_transaction:
            with suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _wait_ms(self) -> int:
        """How long the next write may wait for the lock."""
        if self._deadline is None:
            return BUSY_TIMEOUT_MS
        left = int((self._deadline - time.monotonic()) * 1000)
        return min(BUSY_TIMEOUT_MS, max(DEADLINE_GRACE_MS, left))

    def _read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _store_error(exc, self.path) from None

    def _migrate(self, *, existing: bool | None = None) -> None:
        try:
            migrate(
                self._conn,
                self.path,
                self._write,
                self._index_unindexed_turns,
                existing=self._migrate_existing if existing is None else existing,
            )
        except sqlite3.Error as exc:
            raise _store_error(exc, self.path) from None

    # -- lifecycle -----------------------------------------------------------
    def setup(self) -> None:
        self._migrate(existing=True)

    def drop(self) -> None:
        # Tables reference each other; with the checks off (they can only be
        # switched outside a transaction) they can be dropped in any order.
        with self._lock:
            self._conn.execute("PRAGMA foreign_keys = OFF")
            try:
                with self._write() as conn:
                    objects = conn.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table'"
                        " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%'"
                        " AND name NOT LIKE 'turns_fts_%'"
                    ).fetchall()
                    for (name,) in objects:
                        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                    conn.execute("PRAGMA user_version = 0")
            finally:
                self._conn.execute("PRAGMA foreign_keys = ON")

    def close(self) -> None:
        with self._lock:
            if not self._checkpoint_on_close:
                no_checkpoint = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
                if no_checkpoint is None or not hasattr(self._conn, "setconfig"):
                    # Python < 3.12 cannot ask SQLite to skip the checkpoint:
                    # the connection is left for the process's exit to drop
                    # (the hook process ends with os._exit, so it never runs).
                    return
                self._conn.setconfig(no_checkpoint, True)
            self._conn.close()

    def status(self, user_id: str | None = None) -> Record:
        version = self._read("PRAGMA user_version")[0][0]
        found: dict[str, int] = {}
        if version == SCHEMA_VERSION and user_id is not None:
            found = self.user_counts(user_id)
        elif version == SCHEMA_VERSION:
            for table in ("users", "sessions", "actions", "memories", "chunks", "entities"):
                found[table] = self._read(f"SELECT count(*) FROM {table}")[0][0]
            # Actions kept out of recall, injection and extraction (migration
            # 12 marks the ones stored before): what ``setup`` reports.
            for origin, count in self._read(
                "SELECT origin, count(*) FROM actions WHERE origin != 'conversation'"
                " GROUP BY origin"
            ):
                found[f"{origin}_actions"] = count
        return {
            "engine": self.name,
            "location": str(self.path),
            "schema_version": version,
            "counts": found,
        }

    def user_counts(self, user_id: str) -> Record:
        # A user's actions are the actions of their sessions, which each
        # count theirs (``action_count``: raised by every action stored, and
        # an action goes only with its session): a sum over the user's
        # sessions, not a read of 100k action keys. Their chunks and entities
        # are their shares, which triggers keep (schema.USER_SHARES): no
        # count reads a chunk row, a mention, or another user's rows.
        row = self._read(
            "SELECT count(*) AS sessions, coalesce(sum(action_count), 0) AS actions,"
            " (SELECT count(*) FROM memories WHERE user_id = :user) AS memories,"
            " (SELECT count(*) FROM user_chunks WHERE user_id = :user) AS chunks,"
            " (SELECT count(*) FROM user_entities WHERE user_id = :user) AS entities"
            " FROM sessions WHERE user_id = :user",
            {"user": user_id},
        )
        return dict(row[0])


def _create_private(path: Path) -> None:
    """Create the database's directory (0700) and the file itself (0600) if
    they do not exist: they hold every session, and SQLite gives the -wal and
    -shm files it creates the database file's mode. Existing ones keep theirs
    (a file shared on purpose stays shared)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    if not path.is_file():  # /dev/null, a directory, a FIFO: SQLite's errors say little
        raise StoreUnavailableError(f"{path} is not a regular file: the database must be one")


def _writable_sidecars(path: Path) -> None:
    """Give our -wal / -shm files the database file's mode back when they
    lost write permission but the file has it: SQLite creates them with the
    file's mode, so a period with a read-only file leaves them 0444, and
    every writer after it would fail on them."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if not mode & stat.S_IWUSR:
        return  # still read-only: nothing to give back
    for suffix in ("-wal", "-shm"):
        sidecar = path.with_name(path.name + suffix)
        with suppress(OSError):
            info = os.stat(sidecar)
            if info.st_uid == os.getuid() and not info.st_mode & stat.S_IWUSR:
                os.chmod(sidecar, mode)


def _store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    message = " ".join(str(exc).split())
    if "no such table" in message:
        return StoreError(
            f"{path} has no sessions-graph schema ({message}): run `sessions-graph setup`"
        )
    if "database is locked" in message:  # SQLITE_BUSY: the busy timeout ran out
        return StoreBusyError(f"{path} is locked by another process: {message}")
    if "unable to open" in message or "readonly" in message or "disk I/O" in message:
        return StoreUnavailableError(f"cannot write {path}: {message}")
    return StoreError(f"SQLite error on {path}: {message}")
