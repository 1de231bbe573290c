"""The embedded engine: one SQLite file, safe for many processes at once.

Why these choices:

* WAL journal, so readers never block the writer and hook processes, a cron
  sweep and the user's app can share one file; ``synchronous=NORMAL``, which
  in WAL mode survives any process crash (only a power cut can drop the last
  commits).
* Every write runs in ``BEGIN IMMEDIATE``: the write lock is taken up front,
  so the busy timeout applies and a transaction never fails half way when it
  upgrades from reading to writing.
* FTS5 over an external-content table, kept in sync by triggers; ranking is
  BM25. The search query is rendered from the parsed tree, never passed
  through, so no FTS5 syntax can be injected.
* ``PRAGMA user_version`` is the schema version; ``MIGRATIONS`` brings any
  older file forward on open, under the write lock, so concurrent openers
  migrate once.

The graph is stored relationally: HAS_MEMORY / HAD_SESSION are ``user_id``
columns, PRODUCED_MEMORY is ``memories.session_id``, HAS_ACTION is
``actions.session_id`` and FOLLOWED_BY links ``seq`` to ``seq + 1``.

One module per concern: ``engine`` holds the connection, transactions and
lifecycle, ``schema`` the migrations, ``rows`` what several concerns share;
``memories``, ``sessions``, ``memory_files``, ``reconcile``, ``recall``,
``injections``, ``digests``, ``interactions`` and ``forget`` are the mixins
``SQLiteEngine`` is made of.
"""

from sessions_graph.engines.sqlite.engine import SQLiteEngine

__all__ = ["SQLiteEngine"]
