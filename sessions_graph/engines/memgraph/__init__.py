"""The Memgraph engine: the graph stored as a graph, searched with Memgraph's
Tantivy-backed text index, entities kept in LightRAG's own Memgraph shape.

Imported only when Memgraph is the chosen engine: ``neo4j`` alone costs about
500 ms to import, which the hook path must never pay.

One class, ``MemgraphEngine`` (``engine``: the driver, transactions and
retries, the lifecycle), made of one mixin per concern: ``memories``,
``sessions``, ``memory_files``, ``reconcile``, ``recall``, ``injections``,
``digests``, ``interactions`` and ``forget``.
``schema`` holds the schema statements and version, ``rows`` what several
concerns share. The Cypher itself is in ``cypher/``, by the same concerns.

Design notes (the why; docs/memgraph.md has the longer version):

* **Every statement is a named file** under ``cypher/`` (``sessions_graph.cypher``).
  User input only travels as ``$parameters``; the sole non-parameter part of
  any query is the entity workspace label, validated then backticked.
* **Writes are managed transactions**, wrapped in a bounded exponential
  backoff (tenacity) for what a re-run can fix: transient errors, dropped
  connections, write-write conflicts, and the unique-constraint race two
  processes hit when they MERGE the same new node at once (the re-run finds
  the node). Not a taken ``memory_id``, not a transaction the server aborted
  (timeout, TERMINATE), not ``neo4j://`` routing a standalone server refuses.
  Every transaction function is safe to re-run whole, and carries a bounded
  timeout the server enforces.
* **Release-dependent statements** have one file per form
  (``<name>`` / ``<name>_int_limit``); ``_server_form`` picks the one this
  server takes, asking ``SHOW VERSION`` once (``engines/memgraph_server``).
* **Schema out of the hot path.** ``setup`` and a workspace's first use run
  only the schema statements whose object ``SHOW INDEX INFO`` / ``SHOW
  CONSTRAINT INFO`` do not list: schema DDL waits for (and under load fails
  on) concurrent writers even when the object exists.
* **User-isolated search.** ``text_search.search`` applies its result limit
  (1000 by default) inside the procedure, before any ``WHERE user_id = ...``
  after it, so filtering afterwards lets other users' matches push a user's
  own out of the window. Instead each Memory carries ``user_key`` (``u`` +
  32 hex digits of sha256(user_id): one token, letters and digits only) in the
  same text index as ``content``, and the Tantivy query itself requires
  ``+data.user_key:<key>``. The limit then only ever counts the user's own
  matches; ``user_id`` is still checked afterwards as a second guard.
* **Query rendering.** The parsed query is rendered with Tantivy's occur
  prefixes (``+must``, ``-must_not``) and ``OR``, which every Tantivy version
  parses, rather than ``AND`` / ``NOT`` keywords. Prefix terms (``pyth*``) are
  not sent to Tantivy: Memgraph indexes properties as one JSON field, and
  Tantivy's parser ignores the phrase-prefix ``*`` on JSON fields and refuses
  it on one-word phrases. A query with a prefix term is evaluated here over
  the user's own memories instead. Every hit, on either path, is re-checked
  against the parsed query with the same token rules as the embedded engine.
  Rendering and evaluation live with the rest of the query language in
  ``sessions_graph.query`` (``to_tantivy``, ``matches``); only the per-user
  wrapping and the prefix path's scoring are in ``memories``.
* **Entities** are LightRAG nodes (label = workspace, ``entity_id``,
  ``entity_type``, ``description``, ``source_id``, ``file_path``) that also
  carry ``:Entity``; relations are LightRAG's ``DIRECTED`` edges. LightRAG's
  own ingestion may write the same nodes and edges: our parts of their
  ``<SEP>`` fields are recorded in ``sg_added`` and only those are ever
  removed, and a node or edge goes only when nothing else holds it
  (``engines/lightrag_fields``). What a chunk said about an entity lives on
  its ``MENTIONED_IN`` edge, and users are only ever shown that.
"""

from sessions_graph.engines.memgraph.engine import MemgraphEngine

__all__ = ["MemgraphEngine"]
