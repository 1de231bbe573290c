"""The Memgraph engine run for real on a FalkorDB server: a driver shaped
like the part of the ``neo4j`` driver ``MemgraphEngine`` uses
(``driver.session()``, ``session.run`` / ``execute_read`` /
``execute_write``, ``tx.run(query, params)``, results with ``data()`` /
``consume()``), which sends the engine's own statements, as ``cypher/``
holds them, to FalkorDB (tests/falkordb_store.py starts the server).

Every statement runs as written, except what is Memgraph's own and has no
FalkorDB spelling. Those, and only those, are translated (``_translate``):

* ``SHOW VERSION``: answers ``version`` (the release the test picks), since
  FalkorDB has no such statement; the engine then picks the statement forms
  of that release (``MemgraphEngine._server_form``), which are executed.
* ``SHOW INDEX INFO`` / ``SHOW CONSTRAINT INFO``: FalkorDB's
  ``db.indexes()`` / ``db.constraints()``, answered in Memgraph's columns
  (type, label, properties), so that ``setup`` still runs only what is missing.
* Schema DDL in Memgraph's syntax: ``CREATE INDEX ON :L(p)`` becomes
  ``CREATE INDEX FOR (n:L) ON (n.p)``; a unique constraint becomes
  ``GRAPH.CONSTRAINT CREATE ... UNIQUE`` (FalkorDB needs a range index on the
  properties first, so one is made with it, and the index statement for the
  same property then finds it there); ``CREATE INDEX ON :L`` (a label index)
  does nothing, FalkorDB keeps labels indexed itself; a text index becomes
  ``db.idx.fulltext.createNodeIndex`` over the same properties, without
  stemming or stop words (Tantivy's default tokenizer has neither). The
  ``DROP`` forms likewise. Each returns once FalkorDB has built the object,
  as Memgraph's DDL does (FalkorDB builds in the background).
* ``CALL text_search.search(index, $query, limit)``: FalkorDB's full-text
  ``db.idx.fulltext.queryNodes`` on the index's label, best score first, at
  most ``limit`` nodes (the procedure's own limit). ``$query`` is Tantivy
  syntax and becomes RediSearch syntax: ``data.f:x`` -> ``@f:"x"`` (quoted,
  since RediSearch stems an unquoted term at query time, even on a nostem
  field, and Tantivy does not), ``+a`` -> ``a`` (RediSearch intersects by
  default), ``OR`` -> ``|``; ``-`` and quoted phrases mean the same in both.

Known differences, for which tests skip this engine with the reason: no
transactions (each statement commits on its own, so a transaction that fails
half-way is not rolled back), RediSearch's tokenizer keeps ``_`` inside words
(Tantivy splits there), scores are RediSearch's, not Tantivy's BM25, and a
range index on a property holding strings answers ``<=`` wrongly.
Errors come back as the driver's ``ClientError`` with FalkorDB's message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from neo4j import exceptions as neo4j_errors

from sessions_graph.cypher import statements

redis = __import__("redis")

#: The release ``SHOW VERSION`` answers unless a test picks another.
CURRENT_RELEASE = "3.11.0"

_NAME = r"`?(\w+)`?"
_TEXT_INDEX = re.compile(rf"CREATE TEXT INDEX (\w+) ON :{_NAME}\(([^)]*)\)", re.I)
#: Each text index of the schema: name -> (label, properties).
TEXT_INDEXES: dict[str, tuple[str, list[str]]] = {
    m.group(1): (m.group(2), [p.strip() for p in m.group(3).split(",")])
    for s in statements("schema/setup")
    if (m := _TEXT_INDEX.match(s.strip()))
}
_LABEL_OF_TEXT = {label: name for name, (label, _) in TEXT_INDEXES.items()}

_SEARCH = re.compile(
    r"CALL text_search\.search\('(\w+)',\s*\$query,\s*(?:\{limit:\s*(\$\w+)\}|(\$\w+))\)"
    r"\s*YIELD node, score"
)
_CONSTRAINT = re.compile(
    rf"(CREATE|DROP) CONSTRAINT ON \(\w+:{_NAME}\) ASSERT (.+?) IS UNIQUE;?$", re.I | re.S
)
_INDEX = re.compile(rf"(CREATE|DROP) INDEX ON :{_NAME}(?:\((\w+)\))?;?$", re.I)
_DROP_TEXT = re.compile(r"DROP TEXT INDEX (\w+);?$", re.I)


def redisearch_query(tantivy: str) -> str:
    """A query the engine wrote for Tantivy's parser, in RediSearch syntax
    (see the module docstring). Terms are letters and digits only
    (``sessions_graph.query.tokenize``), so no escaping is needed."""
    query = re.sub(r"data\.(\w+):", r"@\1:", tantivy)
    query = re.sub(r"(^|[\s(])\+", r"\1", query)
    # A lone term is quoted: RediSearch stems an unquoted one at query time,
    # even on a nostem field, which Tantivy never does.
    query = re.sub(r"(@\w+:)(\w+)", r'\1"\2"', query)
    return query.replace(" OR ", " | ")


class Result:
    """A statement's rows as the driver's ``Result`` gives them."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def data(self) -> list[dict[str, Any]]:
        return self._rows

    def consume(self) -> None:
        return None


def _value(value: Any) -> Any:
    """As the driver's ``Record.data()`` converts: nodes and relationships
    to their properties."""
    if hasattr(value, "properties") and hasattr(value, "id"):
        return {k: _value(v) for k, v in value.properties.items()}
    if isinstance(value, list):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    return value


class Tx:
    """A transaction's ``run``: FalkorDB has no multi-statement
    transactions, so each statement commits when it runs."""

    def __init__(self, driver: FalkorDriver, read_only: bool) -> None:
        self._driver = driver
        self._read_only = read_only

    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kw: Any) -> Result:
        text = getattr(query, "text", query)
        return Result(self._driver.execute(text, {**(parameters or {}), **kw}, self._read_only))


class Session:
    def __init__(self, driver: FalkorDriver) -> None:
        self._driver = driver

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kw: Any) -> Result:
        return Tx(self._driver, read_only=False).run(query, parameters, **kw)

    def execute_read(self, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        # GRAPH.RO_QUERY: FalkorDB refuses a write in a read transaction, as
        # a Memgraph cluster's replica would.
        return work(Tx(self._driver, read_only=True), *args, **kwargs)

    def execute_write(self, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return work(Tx(self._driver, read_only=False), *args, **kwargs)


class FalkorDriver:
    """``neo4j.GraphDatabase.driver``'s answer, on one FalkorDB graph."""

    def __init__(self, db: Any, key: str, release: str = CURRENT_RELEASE) -> None:
        self._db = db
        self.key = key
        self.graph = db.select_graph(key)
        # A read-only query refuses a graph that does not exist yet; any
        # query makes it, empty.
        self.graph.query("RETURN 1")
        self.release = release
        #: Every statement sent, as written (before translation).
        self.sent: list[str] = []

    def session(self, **_: Any) -> Session:
        return Session(self)

    def close(self) -> None:
        return None

    # -- running -------------------------------------------------------------
    def execute(self, text: str, params: dict[str, Any], read_only: bool) -> list[dict[str, Any]]:
        self.sent.append(text)
        try:
            translated = self._translate(text.strip(), params)
            if translated is not None:
                return translated
            run = self.graph.ro_query if read_only else self.graph.query
            result = run(text, params)
        except redis.exceptions.ResponseError as exc:
            raise neo4j_errors.Neo4jError._hydrate_neo4j(
                code="Memgraph.ClientError.MemgraphError.MemgraphError", message=str(exc)
            ) from None
        names = [column[1] for column in result.header]
        return [dict(zip(names, map(_value, row), strict=True)) for row in result.result_set]

    def _query(self, text: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self.graph.query(text, params or {}).result_set

    def _translate(self, text: str, params: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Rows for a Memgraph-only statement run here, or None: run ``text``
        (``params["query"]`` rewritten for a text search)."""
        body = "\n".join(line for line in text.splitlines() if not line.startswith("//")).strip()
        upper = body.upper()
        if upper == "SHOW VERSION":
            return [{"version": self.release}]
        if upper == "SHOW INDEX INFO":
            return self._show_indexes()
        if upper == "SHOW CONSTRAINT INFO":
            return [
                {"constraint type": kind.lower(), "label": label, "properties": properties}
                for kind, label, properties, *_ in self._query("CALL db.constraints()")
            ]
        if m := _CONSTRAINT.match(body):
            self._constraint(m.group(1).upper(), m.group(2), re.findall(r"\.(\w+)", m.group(3)))
            self._settled()
            return []
        if m := _INDEX.match(body):
            self._index(m.group(1).upper(), m.group(2), m.group(3))
            self._settled()
            return []
        if m := _TEXT_INDEX.match(body):
            label, properties = m.group(2), [p.strip() for p in m.group(3).split(",")]
            fields = ", ".join(f"{{field: '{p}', nostem: true}}" for p in properties)
            options = f"{{label: '{label}', stopwords: []}}"
            self._query(f"CALL db.idx.fulltext.createNodeIndex({options}, {fields})")
            self._settled()
            return []
        if m := _DROP_TEXT.match(body):
            self._query(f"CALL db.idx.fulltext.drop('{TEXT_INDEXES[m.group(1)][0]}')")
            return []
        if m := _SEARCH.search(text):
            label = TEXT_INDEXES[m.group(1)][0]
            limit = m.group(2) or m.group(3)
            call = (
                f"CALL db.idx.fulltext.queryNodes('{label}', $query) YIELD node, score\n"
                f"WITH node, score ORDER BY score DESC LIMIT {limit}"
            )
            text = text[: m.start()] + call + text[m.end() :]
            params["query"] = redisearch_query(params["query"])
            result = self.graph.ro_query(text, params)
            names = [column[1] for column in result.header]
            return [dict(zip(names, map(_value, row), strict=True)) for row in result.result_set]
        return None

    def _settled(self) -> None:
        """Wait until every index and constraint is in use: FalkorDB builds
        them in the background, where Memgraph's DDL returns once they are
        there (a write meanwhile could miss a full-text index)."""
        deadline = time.monotonic() + 10
        while any(row[-2] != "OPERATIONAL" for row in self._query("CALL db.indexes()")) or any(
            row[-1] != "OPERATIONAL" for row in self._query("CALL db.constraints()")
        ):
            assert time.monotonic() < deadline, "FalkorDB did not finish building its indexes"
            time.sleep(0.005)

    def _show_indexes(self) -> list[dict[str, Any]]:
        rows = []
        for label, properties, types, *_ in self._query("CALL db.indexes()"):
            for prop in properties:
                if "RANGE" in types.get(prop, []):
                    rows.append({"index type": "label+property", "label": label, "property": prop})
            if label in _LABEL_OF_TEXT and any("FULLTEXT" in t for t in types.values()):
                name = _LABEL_OF_TEXT[label]
                rows.append({"index type": f"label_text (name: {name})", "label": label})
        return rows

    def _indexed(self, label: str, prop: str) -> bool:
        return any(
            row[0] == label and "RANGE" in row[2].get(prop, [])
            for row in self._query("CALL db.indexes()")
        )

    def _index(self, action: str, label: str, prop: str | None) -> None:
        if prop is None:
            return  # FalkorDB keeps its labels indexed: no label index to make
        if action == "CREATE":
            # A unique constraint's own index may already be there.
            if not self._indexed(label, prop):
                self._query(f"CREATE INDEX FOR (n:`{label}`) ON (n.`{prop}`)")
        elif self._indexed(label, prop) and not self._constrained(label, prop):
            self._query(f"DROP INDEX FOR (n:`{label}`) ON (n.`{prop}`)")

    def _constrained(self, label: str, prop: str) -> bool:
        return any(
            row[1] == label and prop in row[2] for row in self._query("CALL db.constraints()")
        )

    def _constraint(self, action: str, label: str, properties: list[str]) -> None:
        command = [self.key, "UNIQUE", "NODE", label, "PROPERTIES", len(properties), *properties]
        if action == "CREATE":
            for prop in properties:
                self._index("CREATE", label, prop)
            self._db.connection.execute_command("GRAPH.CONSTRAINT", "CREATE", *command)
        else:
            self._db.connection.execute_command("GRAPH.CONSTRAINT", "DROP", *command)
            # The index FalkorDB needed for it goes with it, as Memgraph's
            # constraint has none: a label left with no index can take its
            # full-text index again (FalkorDB keeps one configuration per label).
            for prop in properties:
                if self._indexed(label, prop) and not self._constrained(label, prop):
                    self._query(f"DROP INDEX FOR (n:`{label}`) ON (n.`{prop}`)")


_MAPS = "FalkorDB stores no map as a property value, and the engine keeps maps on nodes: {}"
_ENTITIES = _MAPS.format("an entity's sg_added (the parts of LightRAG's fields we added)")
_FILES = _MAPS.format("a memory file's versions (a list of maps)")
_CLAIMS = _MAPS.format("a chunk's claims (a list of maps)")
_NO_ROLLBACK = (
    "FalkorDB has no multi-statement transactions: what a refused transaction"
    " wrote before the refusal is not rolled back"
)
_SCORES = (
    "ranks by full-text scores: Memgraph's are Tantivy's BM25, FalkorDB's are"
    " RediSearch's TF-IDF, which order these turns differently"
)

#: Contract tests this cannot run, by test function: why.
GAPS: dict[str, str] = {
    **dict.fromkeys(
        [
            "test_a_session_sees_entity_types_from_its_own_chunks_only",
            "test_a_session_sees_only_its_own_mentions",
            "test_an_entity_of_another_users_sessionless_memory_is_not_recalled",
            "test_an_entity_only_a_sessionless_memory_mentions_is_recalled",
            "test_an_entity_stays_while_another_chunk_mentions_it",
            "test_chunks_and_entities_of_a_shared_id_stay_each_users",
            "test_deleting_a_memory_collects_its_chunks_and_entities",
            "test_a_name_in_two_workspaces_is_two_entities",
            "test_an_entity_hit_is_dated_by_its_latest_mention_and_lists_newest_first",
            "test_an_entitys_mentions_are_filtered_like_turns",
            "test_each_hit_shows_the_documented_length_of_its_text",
            "test_entity_lane_leads_to_the_turns_that_mention_it",
            "test_entity_sessions_casefolds_and_puts_the_latest_activity_first",
            "test_entity_type_is_the_first_one_and_a_repeated_name_keeps_its_last_mention",
            "test_entity_units_are_bounded_per_entity",
            "test_every_content_change_bumps_the_version_by_one",
            "test_forget_counts_have_the_same_keys_and_meaning",
            "test_forgetting_a_user_leaves_every_other_users_data",
            "test_forgetting_one_users_session_leaves_the_other_users_same_ids",
            "test_names_cannot_forge_a_hit_in_the_render",
            "test_other_users_are_never_recalled",
            "test_relation_ends_the_chunk_did_not_list_become_entities",
            "test_saving_a_chunk_again_replaces_what_it_said",
            "test_session_entities_join_distinct_descriptions_by_chunk_hash",
            "test_status_counts_every_node_kind",
            "test_the_asking_session_is_left_out_through_the_entity_lane",
            "test_user_entity_mentions_counts_each_sessions_names_in_one_read",
            "test_user_entity_mentions_reads_only_the_users_own_chunks",
        ],
        _ENTITIES,
    ),
    **dict.fromkeys(
        [
            "test_a_file_is_a_memory_searched_and_recalled_like_any",
            "test_a_path_taken_or_outside_the_memory_directory_is_refused",
            "test_a_write_on_a_stale_version_changes_nothing",
            "test_clear_all_memory_deletes_only_the_users_files",
            "test_create_reports_what_is_in_the_way",
            "test_create_view_and_list",
            "test_delete_a_file_or_a_directory",
            "test_editing_a_file_never_touches_another_users_file_at_the_same_path",
            "test_editing_a_file_never_touches_the_users_other_files",
            "test_every_shared_method_takes_upstreams_signature",
            "test_forgetting_a_user_takes_their_files",
            "test_insert",
            "test_oversized_and_empty_files_are_refused",
            "test_rename_a_file_or_a_directory",
            "test_str_replace",
            "test_the_newest_versions_are_kept_with_their_sessions",
            "test_users_are_isolated",
        ],
        _FILES,
    ),
    **dict.fromkeys(
        [
            "test_a_live_claim_keeps_other_owners_out",
            "test_a_renewed_claim_outlives_its_first_lease",
            "test_a_zero_lease_gives_the_claim_up",
            "test_an_expired_claim_is_taken_over",
            "test_claims_are_per_workspace",
            "test_deleting_a_chunks_last_unit_removes_its_claim",
            "test_extracted_chunks_are_never_claimable",
            "test_extraction_ends_the_claim_in_its_workspace_only",
            "test_unknown_chunks_are_never_claimed",
        ],
        _CLAIMS,
    ),
    **dict.fromkeys(
        [
            "test_a_memory_cannot_join_another_users_session",
            "test_memory_into_another_users_session_is_refused_whole",
        ],
        _NO_ROLLBACK,
    ),
    **dict.fromkeys(
        [
            "test_a_question_asking_when_prefers_the_turn_that_says_when",
            "test_a_tool_call_and_its_result_are_one_hit",
            "test_a_turn_is_shown_with_one_turn_each_side",
            "test_cjk_text_is_recalled",
            "test_free_text_is_searched_as_words_never_syntax",
            "test_irregular_forms_match_each_other",
            "test_recorded_actions_are_searchable_at_once",
            "test_the_first_person_a_question_names_is_its_subject",
            "test_tokens_over_forty_characters_are_recalled",
        ],
        _SCORES,
    ),
    **dict.fromkeys(
        [
            "test_a_chunk_a_dead_run_held_is_extracted_when_its_claim_expires",
            "test_a_chunk_another_run_holds_is_waited_for_not_sent",
            "test_a_chunk_claimed_by_one_extractor_is_not_claimed_by_the_other",
            "test_a_failed_extraction_gives_its_chunk_claim_up",
            "test_a_failed_session_counts_every_request_it_sent",
            "test_a_session_reconciles_through_an_openai_compatible_server",
            "test_a_short_chunk_keeps_its_local_findings_without_an_llm_call",
            "test_an_llm_pass_after_the_local_one_adds_and_loses_nothing",
            "test_changed_memory_is_relinked_and_orphans_collected",
            "test_command_line_passwords_never_reach_the_store_or_recall",
            "test_concurrent_sweeps_never_share_a_session",
            "test_deeply_nested_json_is_reconciled",
            "test_descriptions_are_per_mention",
            "test_expired_claim_is_taken_over",
            "test_failure_is_recorded_and_keeps_the_last_summary",
            "test_forget_removes_what_only_the_session_named",
            "test_forget_session_keeps_what_others_still_use",
            "test_forget_user_removes_everything_only_they_produced",
            "test_local_extraction_is_deduped_by_hash_and_incremental",
            "test_named_entities_come_from_the_optional_model",
            "test_new_content_queues_the_session_and_only_it_is_extracted",
            "test_no_secret_becomes_an_entity",
            "test_reconcile_session_extracts_and_links",
            "test_reconciled_content_is_never_sent_again",
            "test_user_counts_stay_exact_through_forget_for_ids_sharing_a_prefix",
            "test_sweep_dedups_shared_chunks_in_flight",
            "test_the_llm_writes_one_digest_per_session_and_never_twice",
            "test_the_local_extractor_leaves_what_the_llm_extracted",
            "test_units_are_prepared_off_the_event_loop",
            "test_without_an_llm_the_digest_is_offline",
            "test_without_an_llm_the_local_extractor_runs",
            "test_a_sweep_slower_than_its_lease_keeps_its_claims",
            "test_a_chunk_under_12_characters_costs_no_call",
            "test_duration_is_the_wall_time_to_the_millisecond",
            "test_concurrency_bounds_the_calls_in_flight",
            "test_a_failed_chunk_lets_the_sessions_other_chunks_finish",
            "test_a_failure_is_stored_on_one_line_and_cut_to_500_characters",
            "test_the_digest_request_counts_every_character_sent",
            "test_actions_the_digest_does_not_read_keep_the_llms_digest",
            "test_an_llm_run_saves_only_the_llms_findings",
            "test_an_llm_pass_over_local_findings_prints_no_model_hint",
        ],
        _MAPS.format("reconciliation claims chunks and writes entities (lists of maps, maps)"),
    ),
    "test_auto_reconcile_from_settings": (
        "reconciles in a child process, which opens the store from its settings: the"
        " FalkorDB-backed driver exists only in the test process"
    ),
    "test_the_sweep_deletes_only_expired_interactions": (
        "FalkorDB's range index on :Interaction(expires_at), which the sweep's MATCH"
        " uses, answers a comparison of strings wrongly (a later time <= an earlier one"
        " holds through it): the statement's condition is tested without the index"
        " (test_cypher_conditions)"
    ),
}
