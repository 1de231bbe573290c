"""What only the embedded engine promises: one file shared by many processes,
and a schema that migrates forward when an older file is opened."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sessions_graph import SessionsGraph, StoreError
from sessions_graph.engines.sqlite import SQLiteEngine, schema
from sessions_graph.errors import StoreUnavailableError

WRITER = textwrap.dedent(
    """
    import sys
    from sessions_graph import SessionsGraph
    db, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    graph = SessionsGraph(db=db)
    for i in range(count):
        graph.save_memory(f"user{worker % 2}", f"worker{worker} note{i} about python")
        graph.record_actions(
            f"s-{worker}", [{"action_id": f"w{worker}-a{i}", "action_type": "user_message",
                             "text": f"message {i}"}], user_id=f"user{worker % 2}")
    """
)


def test_many_processes_write_one_file_without_errors(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    workers, count = 8, 60
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(w), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    graph = SessionsGraph(db=str(db))
    assert graph.status()["counts"]["memories"] == workers * count
    assert len(graph.get_memories("user0", limit=10_000)) == workers * count // 2
    assert len(graph.search_memories("user1", "python", limit=10_000)) == workers * count // 2
    for w in range(workers):
        actions = graph.get_actions(f"s-{w}")
        assert [a.seq for a in actions] == list(range(count))
        assert [a.action_id for a in actions] == [f"w{w}-a{i}" for i in range(count)]
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_older_file_migrates_forward_and_keeps_its_data(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    for statement in schema._statements(schema.MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO users VALUES ('alice', '2026-01-01T00:00:00.000000+00:00')")
    conn.execute(
        "INSERT INTO memories(memory_id, user_id, content, session_id, created_at, updated_at)"
        " VALUES ('m-1', 'alice', 'Prefers Python', NULL, '2026-01-01T00:00:00.000000+00:00',"
        " '2026-01-01T00:00:00.000000+00:00')"
    )
    conn.close()

    graph = SessionsGraph(db=str(db))
    assert graph.status()["schema_version"] == schema.SCHEMA_VERSION
    assert [m.memory_id for m in graph.search_memories("alice", "python")] == ["m-1"]


def test_a_newer_file_is_refused_not_damaged(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    SessionsGraph(db=str(db)).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        SessionsGraph(db=str(db))


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    """Broken, not unavailable: a hook would otherwise spool events for a
    replay that can never succeed."""
    db = tmp_path / "notes.db"
    db.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError, match="not a database") as raised:
        SessionsGraph(db=str(db))
    assert not isinstance(raised.value, StoreUnavailableError)
    assert db.read_bytes().startswith(b"these are my notes")  # left as it was


def test_new_store_files_are_private(tmp_path: Path) -> None:
    """Directories the store creates are 0700 and its files 0600 (the
    database, -wal and -shm), whatever the umask: they hold every session."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = tmp_path / "new" / "dir" / "s.db"
        graph = SessionsGraph(engine=SQLiteEngine(path))
        graph.record_session_start("s-1", user_id="alice")
        files = [path, path.with_name("s.db-wal"), path.with_name("s.db-shm")]
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
        assert modes == {"s.db": 0o600, "s.db-wal": 0o600, "s.db-shm": 0o600}
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        graph.close()
    finally:
        os.umask(old)


def test_driver_errors_are_the_packages_own(tmp_path: Path) -> None:
    """No raw sqlite3 error escapes: a dropped schema, a read-only store and a
    path that is no database are StoreErrors with one clear line."""
    graph = SessionsGraph(db=str(tmp_path / "d.db"))
    graph.setup()
    graph.drop()
    with pytest.raises(StoreError, match="setup"):
        graph.save_memory("alice", "after drop")
    with pytest.raises(StoreError, match="setup"):
        graph.get_memories("alice")
    graph.close()

    path = tmp_path / "ro.db"
    engine = SQLiteEngine(path)
    engine.close()
    # A read-only store, as a file without write permission opens (root
    # ignores file modes, so the connection itself is made read-only).
    engine._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    engine._conn.row_factory = sqlite3.Row
    # Unavailable, not broken: a hook spools the event for a later replay.
    with pytest.raises(StoreUnavailableError, match=r"cannot write .*readonly"):
        SessionsGraph(engine=engine).save_memory("alice", "while read-only")
    engine.close()

    with pytest.raises(StoreError) as raised:
        SessionsGraph(db="/dev/null").save_memory("alice", "x")
    assert "not a regular file" in str(raised.value) and "\n" not in str(raised.value)


def test_write_access_comes_back_after_a_read_only_period(tmp_path: Path) -> None:
    """SQLite creates -wal / -shm with the database file's mode: opened while
    the file was read-only, they stay 0444 and block every later writer. The
    next opener of a writable file gives them the file's mode back."""
    import os
    import stat

    path = tmp_path / "p.db"
    SessionsGraph(db=str(path)).save_memory("alice", "before")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        side.touch()
        os.chmod(side, 0o444)  # what a read-only period leaves
    graph = SessionsGraph(db=str(path))
    graph.save_memory("alice", "after")
    modes = [stat.S_IMODE(path.with_name(path.name + s).stat().st_mode) for s in ("-wal", "-shm")]
    assert modes == [0o600, 0o600]
    graph.close()


def test_a_file_whose_migrations_ran_in_another_order_opens(tmp_path: Path) -> None:
    """A build between releases numbered the memory files migration 4: its
    files are at version 4 with memory_files made and no turn index. Opening
    one runs 4 onwards, which must skip what is there already (memory files)
    and build what is not (the turn index), keeping the data."""
    db = tmp_path / "intermediate.db"
    conn = sqlite3.connect(db, isolation_level=None)
    schema._add_recall_functions(conn)
    memory_files = schema.MIGRATIONS[8]
    assert "CREATE TABLE memory_files" in memory_files
    for migration in [*schema.MIGRATIONS[:3], memory_files]:
        for statement in schema._statements(migration):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 4")
    conn.execute("INSERT INTO users VALUES ('alice', '2026-01-01T00:00:00.000000+00:00')")
    conn.execute(
        "INSERT INTO sessions(session_id, user_id, started_at) VALUES ('s', 'alice', '2026')"
    )
    conn.execute(
        "INSERT INTO actions(action_id, session_id, seq, action_type, text)"
        " VALUES ('a0', 's', 0, 'user_message', 'which kafka topic holds orders?')"
    )
    conn.close()

    engine = SQLiteEngine(db)
    assert engine.status()["schema_version"] == schema.SCHEMA_VERSION
    memory = {
        "memory_id": "m-1",
        "user_id": "alice",
        "content": "notes",
        "session_id": None,
        "created_at": "2026-01-02T00:00:00.000000+00:00",
        "updated_at": "2026-01-02T00:00:00.000000+00:00",
    }
    assert engine.create_memory_file(memory, "/memories/notes.md", ["/memories"], 20) == "created"
    assert engine.get_memory_file("alice", "/memories/notes.md")["version"] == 1
    hits = engine.search_turns("alice", [("kafka",)], 10, {})
    assert [h["action_id"] for h in hits] == ["a0"]


def _hold_the_write_lock(path: Path, seconds: float) -> threading.Thread:
    """Another writer holding the database's write lock for ``seconds``."""
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    return thread


def test_a_wait_budget_bounds_how_long_a_write_waits_for_the_lock(tmp_path: Path) -> None:
    """A connection opened with a wait budget (a hook's) waits for a held
    lock only until the budget is spent (plus a short grace), then raises
    StoreBusyError so that the event is spooled; one still within its
    budget waits the lock out."""
    from sessions_graph.errors import StoreBusyError

    path = tmp_path / "graph.db"
    spent = SQLiteEngine(path, wait_budget=0.0)
    patient = SQLiteEngine(path, wait_budget=30.0)

    holder = _hold_the_write_lock(path, 1.5)
    with pytest.raises(StoreBusyError, match="locked by another process"):
        spent.start_session("s-1", "alice", "2026-01-01T00:00:00Z", None, None)
    holder.join()
    assert spent.get_session("s-1") is None

    holder = _hold_the_write_lock(path, 1.0)
    patient.start_session("s-2", "alice", "2026-01-01T00:00:00Z", None, None)
    holder.join()
    assert patient.get_session("s-2") is not None
    spent.close()
    patient.close()

    # A budget that runs out after the connection opened: the wait shrinks
    # to the grace (0.1 s), shorter than this 0.4 s lock.
    later = SQLiteEngine(path, wait_budget=1.0)
    time.sleep(1.1)
    holder = _hold_the_write_lock(path, 0.4)
    with pytest.raises(StoreBusyError):
        later.start_session("s-3", "alice", "2026-01-01T00:00:00Z", None, None)
    holder.join()
    later.close()


def test_a_hook_leaves_a_file_with_other_tables_to_a_migration(tmp_path: Path) -> None:
    """``migrate_existing=False`` (a hook's) creates the schema only in a new,
    empty file: one that already holds tables, whatever its version, is left
    to a migration outside the hook."""
    from sessions_graph.errors import StoreMigrationPendingError

    path = tmp_path / "graph.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE notes(x)")
    other.commit()
    other.close()
    with pytest.raises(StoreMigrationPendingError, match="background migration"):
        SQLiteEngine(path, migrate_existing=False)
    assert [r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")] == [
        "notes"
    ]

    fresh = SQLiteEngine(tmp_path / "new.db", migrate_existing=False)
    assert fresh.status()["schema_version"] == schema.SCHEMA_VERSION
    fresh.close()
