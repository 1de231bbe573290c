"""The Memgraph engine's schema: the indexes, constraints and text indexes a
store needs (``cypher/schema/setup``, and per entity workspace), creating only
the missing ones, and the schema version.

``setup`` and a workspace's first use (``engine.py``) run these; the statement
runners (auto-commit queries and DDL) are passed in from there."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sessions_graph.cypher import render, statements
from sessions_graph.engines import memgraph_server as server
from sessions_graph.engines.base import Record
from sessions_graph.errors import StoreError, StoreUnavailableError

#: Bumped when ``cypher/schema/setup`` changes in a way old stores must follow.
#: 2: recall's turn index (``action_recall_index``; ``setup`` indexes older actions).
#: 3: memory files, unique per user and path.
#: 4: turn documents hold speaker and asks; 5: and tells_time (``setup``
#: rewrites older ones). 6: each action's origin (``setup`` classifies older
#: ones, ``Sessions._mark_origins``). 7: the injection
#: ledger (``:Injection`` indexes).
#: 8: memories carry their project (``setup`` gives older ones their
#: session's) and sessions their digest.
#: 9: an index on ``:Memory(session_id)`` (a session's memories were found
#: by scanning every memory).
#: 10: long words in turn documents are cut into pieces of at most 39 bytes,
#: not 40 characters, which Tantivy dropped (``setup`` rewrites the documents
#: cut before: ``recall_cut_bytes``).
#: 11: no unique constraint on a workspace's entity_id (LightRAG's ingest
#: fails on its violations, and a graph with duplicates cannot take it);
#: ``setup`` drops the one older builds made.
#: 12: interactions and feedback weights (their constraints and indexes).
#: 13: action ids are unique per user: ``:Action(action_key)`` (the user's id
#: and the action's, ``engines.base.action_key``) is the unique key, not
#: ``action_id``; ``setup`` keys older actions and drops the old constraint
#: and index (``schema/retired``).
#: 14: turn documents hold whether an Asking Turn only asks
#: (``recall_only_asks``; ``setup`` rewrites older ones).
#: 15: turn documents are their words' Porter stems, and questions are asked
#: as theirs (``recall_stemmed``; Tantivy does not stem; ``setup`` rewrites
#: older ones).
#: 16: turn documents hold their Told Time (``recall_told_since`` /
#: ``recall_told_until``, marked computed by ``recall_told``; ``setup``
#: rewrites older ones).
SCHEMA_VERSION = 16

#: What a schema statement's error says when the object is already there /
#: already gone. Memgraph 3.6.2, 3.11 and main report an existing or missing
#: index, constraint or text index as a notification, not an error; older
#: builds failed for the text index ('Text index "x" already exists.',
#: 'Text index "x" doesn’t exist.', with a typographic apostrophe, which
#: ``_ddl`` in ``engine.py`` folds to ASCII before matching), which is still success.
_EXISTS_ALREADY = ("already exists",)
_DOES_NOT_EXIST = ("doesn't exist", "does not exist")


def workspace_schema(workspace: str) -> list[str]:
    """The statements that index a workspace label the way LightRAG looks
    entities up. No unique constraint on entity_id: LightRAG writes the same
    nodes, retries only transient errors (a commit-time unique violation is
    a client error, so its ingest would fail when it races a reconciliation
    on a new entity), and a graph where it already made duplicates cannot
    take the constraint. Duplicates are coped with instead: a MERGE that
    finds several nodes updates them all (``reconcile/merge_entities``)."""
    return [render("admin/ensure_workspace_index", workspace)]


def retired_schema(workspace: str) -> list[tuple[server.SchemaKey, str]]:
    """What older builds created on a workspace and setup drops where it is
    listed: the key ``SHOW CONSTRAINT INFO`` lists it by, and the statement."""
    key: server.SchemaKey = ("unique", workspace, "entity_id")
    return [(key, render("admin/drop_workspace_constraint", workspace))]


def setup_retired(workspaces: Sequence[str]) -> list[tuple[server.SchemaKey, str]]:
    """What ``setup`` drops where it is listed: the store's retired objects
    (``schema/retired``, each keyed as the ``CREATE`` it undoes) and each
    workspace's."""
    retired = []
    for statement in statements("schema/retired"):
        key = server.schema_key("CREATE" + statement.strip()[len("DROP") :])
        if key is None:
            raise StoreError(f"cannot tell what {statement!r} drops")
        retired.append((key, statement))
    return retired + [item for workspace in workspaces for item in retired_schema(workspace)]


def setup_schema(workspaces: Sequence[str]) -> list[str]:
    """What ``setup`` wants: the script's statements and each workspace's."""
    wanted = statements("schema/setup")
    for workspace in workspaces:
        wanted += workspace_schema(workspace)
    return wanted


def create_schema(
    auto: Callable[[str], list[Record]],
    ddl: Callable[[str, tuple[str, ...]], None],
    wanted: Sequence[str],
    retired: Sequence[tuple[server.SchemaKey, str]] = (),
) -> None:
    """Run those of the ``wanted`` schema statements whose object the
    server does not list yet; ``auto`` runs a named statement in an
    auto-commit transaction, ``ddl`` a schema statement.

    Checked with ``SHOW INDEX INFO`` / ``SHOW CONSTRAINT INFO`` rather
    than by re-running the DDL: index creation needs read-only storage
    access and constraint creation exclusive access, so each one waits
    for (and under load fails on) concurrent writers even when the object
    exists. A statement whose object we cannot recognise in the listing
    is run, and "already exists" is success (a concurrent setup). Each of
    the ``retired`` objects that is listed is dropped ("does not exist" is
    success: a concurrent setup dropped it)."""
    try:
        present = server.present_schema(auto("admin/show_indexes"), auto("admin/show_constraints"))
    except StoreUnavailableError:
        raise
    except StoreError:
        present = set()  # listing refused (e.g. privileges): run them all
    for statement in server.missing_statements(wanted, present):
        ddl(statement, _EXISTS_ALREADY)
    for key, statement in retired:
        if key in present:
            ddl(statement, _DOES_NOT_EXIST)
