"""sessions-graph and LightRAG's own ingestion writing one Memgraph
workspace, without a server: one in-memory graph answers both.

* Our side is the Memgraph engine itself (``save_extraction``, garbage
  collection), its transaction functions run against ``MemGraph``, which
  carries out each of our named statements on the in-memory graph.
* LightRAG's side is its own code: ``MemgraphStorage`` (lightrag/kg/
  memgraph_impl.py) with a fake async driver that executes LightRAG's node
  and edge Cypher (``MERGE ... SET n += $properties``, ``RETURN n``,
  ``properties(r)``) on the same graph, driven by LightRAG's own merge
  functions (``_merge_nodes_then_upsert`` / ``_merge_edges_then_upsert``),
  which read what we wrote and write their union back.

What must hold: each side's parts survive the other's writes and removals;
a node or edge is deleted only when nothing holds it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from memgraph_fakes import fake_engine

from sessions_graph import cypher
from sessions_graph.engines import lightrag_fields as fields
from sessions_graph.engines.memgraph import MemgraphEngine

pytest.importorskip("lightrag")

from lightrag import operate
from lightrag.constants import (
    DEFAULT_FILE_PATH_MORE_PLACEHOLDER,
    SOURCE_IDS_LIMIT_METHOD_KEEP,
)
from lightrag.kg.memgraph_impl import MemgraphStorage

WS = "base"
H1 = "a" * 64  # our chunks: SHA-256 hex
H2 = "b" * 64
DOC = "chunk-0123456789abcdef0123456789abcdef"  # LightRAG's chunk id


# -- one in-memory graph ---------------------------------------------------------------
@dataclass
class Node:
    labels: set[str]
    props: dict[str, Any]


@dataclass
class Edge:
    type: str
    a: int
    b: int
    props: dict[str, Any] = field(default_factory=dict)


class MemGraph:
    def __init__(self) -> None:
        self.nodes: dict[int, Node] = {}
        self.edges: dict[int, Edge] = {}
        self._next = 0

    def _id(self) -> int:
        self._next += 1
        return self._next

    def add_node(self, labels: set[str], props: dict[str, Any]) -> int:
        i = self._id()
        self.nodes[i] = Node(set(labels), dict(props))
        return i

    def add_edge(self, type_: str, a: int, b: int, props: dict[str, Any] | None = None) -> int:
        i = self._id()
        self.edges[i] = Edge(type_, a, b, dict(props or {}))
        return i

    def entity(self, name: str) -> int | None:
        for i, n in self.nodes.items():
            if WS in n.labels and n.props.get("entity_id") == name:
                return i
        return None

    def chunk(self, chunk_hash: str) -> int | None:
        for i, n in self.nodes.items():
            if "Chunk" in n.labels and n.props.get("hash") == chunk_hash:
                return i
        return None

    def incident(self, node: int) -> list[int]:
        return [i for i, e in self.edges.items() if node in (e.a, e.b)]

    def between(self, a: int, b: int, type_: str = "DIRECTED") -> list[int]:
        return [
            i
            for i, e in self.edges.items()
            if e.type == type_ and {e.a, e.b} == {a, b} and (a != b or e.a == e.b)
        ]

    def merge_edge(self, a: int, b: int) -> Edge:
        found = self.between(a, b)
        return self.edges[found[0]] if found else self.edges[self.add_edge("DIRECTED", a, b)]

    def node_props(self, name: str) -> dict[str, Any]:
        i = self.entity(name)
        assert i is not None, name
        return self.nodes[i].props

    def edge_props(self, x: str, y: str) -> dict[str, Any] | None:
        a, b = self.entity(x), self.entity(y)
        found = self.between(a, b) if a and b else []
        return self.edges[found[0]].props if found else None


# -- our statements, carried out on the in-memory graph ----------------------------------
class OurStatements:
    """Answers the engine's named reconciliation statements."""

    def __init__(self, graph: MemGraph) -> None:
        self.g = graph
        self.by_text = {cypher.load(n): n for n in cypher.names()}
        self.by_text[cypher.render("reconcile/merge_entities", WS)] = "reconcile/merge_entities"

    def __call__(self, statement: str, params: dict[str, Any]) -> Any:
        if statement.startswith("SHOW "):
            return []
        if statement.startswith("CREATE "):
            return []
        name = self.by_text[statement]
        return getattr(self, name.split("/")[1])(**params)

    def mark_extracted(self, hash: str, workspace: str, mark: str = "") -> Any:
        return [{"found": int(self.g.chunk(hash) is not None)}]

    def clear_chunk_mentions(self, hash: str, workspace: str) -> Any:
        c = self.g.chunk(hash)
        out = []
        for i in list(self.g.edges):
            e = self.g.edges[i]
            node = self.g.nodes[e.a]
            if e.type == "MENTIONED_IN" and e.b == c and node.props.get("workspace") == workspace:
                del self.g.edges[i]
                out.append({"entity_id": e.a})
        return out

    def merge_entities(self, hash: str, workspace: str, created_at: int, entities: Any) -> Any:
        c = self.g.chunk(hash)
        merged = []
        for ent in entities:
            i = self.g.entity(ent["name"])
            if i is None:
                i = self.g.add_node({WS}, {"entity_id": ent["name"], "created_at": created_at})
            node = self.g.nodes[i]
            node.labels.add("Entity")
            node.props.update(workspace=workspace, name_key=ent["name_key"])
            if node.props.get("entity_type") is None:
                node.props["entity_type"] = ent["entity_type"]
            found = [
                j
                for j, e in self.g.edges.items()
                if e.type == "MENTIONED_IN" and e.a == i and e.b == c
            ]
            edge = (
                self.g.edges[found[0]]
                if found
                else self.g.edges[self.g.add_edge("MENTIONED_IN", i, c)]
            )
            edge.props.update(description=ent["description"], entity_type=ent["mention_type"])
            merged.append({"name": ent["name"], "id": i})
        return [{"entities": merged}]

    def _rel_rows(self, edge: Edge) -> list[dict[str, Any]]:
        return [
            {"a_id": edge.a, "b_id": edge.b, "props": dict(edge.props)},
            {"a_id": edge.b, "b_id": edge.a, "props": dict(edge.props)},
        ]

    def relations_of_chunk(self, entity_ids: list[int], hash: str) -> Any:
        rows = []
        for e in self.g.edges.values():
            if e.type == "DIRECTED" and hash in (e.props.get("chunk_hashes") or []):
                rows += [
                    r
                    for r in self._rel_rows(e)
                    if r["a_id"] in entity_ids and "Entity" in self.g.nodes[r["a_id"]].labels
                ]
        return rows

    def relations_between(self, pairs: list[dict[str, int]]) -> Any:
        rows = []
        for pair in pairs:
            for i in self.g.between(pair["a"], pair["b"]):
                e = self.g.edges[i]
                rows.append({"a_id": pair["a"], "b_id": pair["b"], "props": dict(e.props)})
        return rows

    def write_relations(self, rows: list[dict[str, Any]], created_at: int) -> Any:
        for row in rows:
            edge = self.g.merge_edge(row["a_id"], row["b_id"])
            edge.props.setdefault("created_at", created_at)
            for key in (
                "description",
                "keywords",
                "weight",
                "source_id",
                "file_path",
                "workspace",
                "chunk_hashes",
            ):
                edge.props[key] = row[key]
            edge.props["sg_assertions"] = row["assertions"]
            edge.props["sg_added"] = row["added"]
        return []

    def release_relations(self, rows: list[dict[str, Any]]) -> Any:
        for row in rows:
            for i in self.g.between(row["a_id"], row["b_id"]):
                props = self.g.edges[i].props
                for key in ("description", "keywords", "weight", "source_id", "file_path"):
                    props[key] = row[key]
                for key in ("chunk_hashes", "sg_assertions", "sg_added", "workspace"):
                    props.pop(key, None)
        return []

    def delete_relations(self, rows: list[dict[str, Any]]) -> Any:
        for row in rows:
            for i in self.g.between(row["a_id"], row["b_id"]):
                del self.g.edges[i]
        return []

    def entity_state(self, entity_ids: list[int]) -> Any:
        rows = []
        for i in entity_ids:
            node = self.g.nodes.get(i)
            if node is None or "Entity" not in node.labels:
                continue
            edges = [self.g.edges[j] for j in self.g.incident(i)]
            mentions = [
                {"hash": self.g.nodes[e.b].props["hash"], "description": e.props["description"]}
                for e in edges
                if e.type == "MENTIONED_IN" and e.a == i
            ] or [{"hash": None, "description": None}]  # as collect() of a null match
            others = sum(1 for e in edges if e.type != "MENTIONED_IN")
            rows.append(
                {"id": i, "props": dict(node.props), "mentions": mentions, "others": others}
            )
        return rows

    def write_entities(self, rows: list[dict[str, Any]]) -> Any:
        for row in rows:
            props = self.g.nodes[row["id"]].props
            for key in ("source_id", "description", "file_path"):
                props[key] = row[key]
            props["sg_added"] = row["added"]
        return []

    def release_entities(self, rows: list[dict[str, Any]]) -> Any:
        for row in rows:
            node = self.g.nodes[row["id"]]
            for key in ("source_id", "description", "file_path"):
                node.props[key] = row[key]
            node.labels.discard("Entity")
            for key in ("sg_added", "name_key", "workspace"):
                node.props.pop(key, None)
        return []

    def delete_entities(self, ids: list[int]) -> Any:
        for i in ids:
            assert not self.g.incident(i), "DELETE of a node with relationships fails"
            del self.g.nodes[i]
        return [{"deleted": len(ids)}]

    def gc_chunks(self, hashes: list[str]) -> Any:
        rows = []
        for h in hashes:
            c = self.g.chunk(h)
            if c is None:
                continue
            edges = [self.g.edges[j] for j in self.g.incident(c)]
            if any(e.type == "HAS_CHUNK" for e in edges):
                continue
            ids = [e.a for e in edges if e.type == "MENTIONED_IN"]
            for j in self.g.incident(c):
                del self.g.edges[j]
            del self.g.nodes[c]
            rows.append({"hash": h, "entity_ids": ids})
        return rows


# -- LightRAG's MemgraphStorage on the same graph --------------------------------------------
class _Result:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    async def single(self) -> dict[str, Any] | None:
        return self.rows[0] if self.rows else None

    async def fetch(self, n: int) -> list[dict[str, Any]]:
        return self.rows[:n]

    async def data(self) -> list[dict[str, Any]]:
        return self.rows

    async def consume(self) -> None:
        return None


class LightRAGCypher:
    """Executes the node and edge statements of LightRAG's MemgraphStorage."""

    def __init__(self, graph: MemGraph) -> None:
        self.g = graph
        self.seen: list[str] = []

    async def run(self, query: str, params: Any = None, **kw: Any) -> _Result:
        p = {**(params or {}), **kw}
        q = " ".join(query.split())
        self.seen.append(q)
        label = f"`{WS}`"
        if q.startswith(f"MERGE (n:{label} {{entity_id: $entity_id}}) SET n += $properties"):
            i = self.g.entity(p["entity_id"])
            if i is None:
                i = self.g.add_node({WS}, {"entity_id": p["entity_id"]})
            self.g.nodes[i].props.update(p["properties"])
            return _Result([])
        if q.startswith(f"MATCH (n:{label} {{entity_id: $entity_id}}) RETURN n"):
            i = self.g.entity(p["entity_id"])
            return _Result([{"n": dict(self.g.nodes[i].props)}] if i else [])
        if "RETURN count(n) > 0 AS node_exists" in q:
            return _Result([{"node_exists": self.g.entity(p["entity_id"]) is not None}])
        a = self.g.entity(p.get("source_entity_id", ""))
        b = self.g.entity(p.get("target_entity_id", ""))
        if "AS edgeExists" in q:
            return _Result([{"edgeExists": bool(a and b and self.g.between(a, b))}])
        if "RETURN properties(r) as edge_properties" in q:
            found = self.g.between(a, b) if a and b else []
            return _Result([{"edge_properties": dict(self.g.edges[i].props)} for i in found])
        if "MERGE (source)-[r:DIRECTED]-(target) SET r += $properties" in q:
            assert a and b
            self.g.merge_edge(a, b).props.update(p["properties"])
            return _Result([])
        raise AssertionError(f"statement not modelled: {q}")


class _Tx:
    def __init__(self, cypher_: LightRAGCypher) -> None:
        self.run = cypher_.run


class _Session:
    def __init__(self, cypher_: LightRAGCypher) -> None:
        self.cypher = cypher_
        self.run = cypher_.run

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def execute_write(self, work: Any, *args: Any, **kw: Any) -> Any:
        return await work(_Tx(self.cypher), *args, **kw)

    execute_read = execute_write


class _AsyncDriver:
    def __init__(self, cypher_: LightRAGCypher) -> None:
        self.cypher = cypher_

    def session(self, **_: Any) -> _Session:
        return _Session(self.cypher)


class _WordTokenizer:
    def encode(self, text: str) -> list[str]:
        return text.split()


GLOBAL_CONFIG = {
    "tokenizer": _WordTokenizer(),
    "summary_context_size": 10_000,
    "summary_max_tokens": 10_000,
    "force_llm_summary_on_merge": 100,  # join descriptions, never call an LLM
    "source_ids_limit_method": SOURCE_IDS_LIMIT_METHOD_KEEP,
    "max_source_ids_per_entity": 200,
    "max_source_ids_per_relation": 200,
    "max_file_paths": 75,
    "file_path_more_placeholder": DEFAULT_FILE_PATH_MORE_PLACEHOLDER,
}


class LightRAGSide:
    def __init__(self, graph: MemGraph) -> None:
        self.cypher = LightRAGCypher(graph)
        self.storage = MemgraphStorage(
            namespace="chunk_entity_relation",
            global_config=GLOBAL_CONFIG,
            embedding_func=None,
            workspace=WS,
        )
        self.storage._driver = _AsyncDriver(self.cypher)
        self.storage._DATABASE = "memgraph"

    def ingest_entity(self, name: str, entity_type: str, description: str, chunk: str) -> None:
        data = [
            {
                "entity_name": name,
                "entity_type": entity_type,
                "description": description,
                "source_id": chunk,
                "file_path": "doc.md",
                "timestamp": 1,
            }
        ]
        asyncio.run(operate._merge_nodes_then_upsert(name, data, self.storage, None, GLOBAL_CONFIG))

    def ingest_relation(
        self, src: str, tgt: str, description: str, keywords: str, chunk: str
    ) -> None:
        data = [
            {
                "src_id": src,
                "tgt_id": tgt,
                "description": description,
                "keywords": keywords,
                "weight": 1.0,
                "source_id": chunk,
                "file_path": "doc.md",
                "timestamp": 1,
            }
        ]
        asyncio.run(
            operate._merge_edges_then_upsert(
                src, tgt, data, self.storage, None, None, GLOBAL_CONFIG
            )
        )

    def node(self, name: str) -> dict[str, Any] | None:
        return asyncio.run(self.storage.get_node(name))

    def edge(self, src: str, tgt: str) -> dict[str, Any] | None:
        return asyncio.run(self.storage.get_edge(src, tgt))


# -- fixtures -----------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _no_lightrag_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGRAPH_WORKSPACE", raising=False)


@dataclass
class World:
    graph: MemGraph
    engine: MemgraphEngine
    lightrag: LightRAGSide

    def chunk(self, chunk_hash: str) -> None:
        self.graph.add_node({"Chunk"}, {"hash": chunk_hash, "extracted_in": []})

    def extract(
        self, chunk_hash: str, entities: list[dict[str, Any]], relations: list[dict[str, Any]] = ()
    ) -> None:  # type: ignore[assignment]
        self.engine.save_extraction(chunk_hash, WS, entities, list(relations))

    def collect(self, chunk_hash: str) -> tuple[int, int]:
        return self.engine._write(lambda tx: self.engine._collect_garbage(tx, [chunk_hash]))


@pytest.fixture
def world() -> World:
    graph = MemGraph()
    engine, _ = fake_engine(OurStatements(graph))
    return World(graph, engine, LightRAGSide(graph))


MEMGRAPH = {"name": "Memgraph", "entity_type": "product", "description": "a graph database"}
TANTIVY = {"name": "Tantivy", "entity_type": "library", "description": "a search library"}
USES = {
    "source": "Memgraph",
    "target": "Tantivy",
    "description": "indexes text with",
    "keywords": "search,text",
    "weight": 1.0,
}


# -- the tests --------------------------------------------------------------------------------
def test_lightrag_merges_into_our_entity_and_keeps_its_part_when_ours_goes(world: World) -> None:
    world.chunk(H1)
    world.extract(H1, [MEMGRAPH, TANTIVY], [USES])
    assert world.graph.node_props("Memgraph")["source_id"] == H1

    # LightRAG ingests a document that mentions the same concept.
    world.lightrag.ingest_entity("Memgraph", "product", "an in-memory graph DB", DOC)
    world.lightrag.ingest_relation("Memgraph", "Tantivy", "embeds", "full-text", DOC)
    node = world.lightrag.node("Memgraph")
    assert node is not None
    assert node["source_id"].split("<SEP>") == [H1, DOC]
    assert node["description"] == "a graph database<SEP>an in-memory graph DB"
    edge = world.lightrag.edge("Memgraph", "Tantivy")
    assert edge is not None and set(edge["source_id"].split("<SEP>")) == {H1, DOC}

    # Our chunk says something else now: only our part changes.
    world.extract(H1, [{**MEMGRAPH, "description": "a graph store"}, TANTIVY], [USES])
    node = world.graph.node_props("Memgraph")
    assert node["source_id"].split("<SEP>") == [DOC, H1]
    assert node["description"].split("<SEP>") == ["an in-memory graph DB", "a graph store"]

    # Our chunk is collected: the node and the edge are LightRAG's alone again.
    assert world.collect(H1) == (1, 0)
    node = world.graph.node_props("Memgraph")
    assert node["source_id"] == DOC
    assert node["description"] == "an in-memory graph DB"
    assert node["file_path"] == "doc.md"
    assert "sg_added" not in node and "name_key" not in node
    assert "Entity" not in world.graph.nodes[world.graph.entity("Memgraph")].labels
    edge = world.graph.edge_props("Memgraph", "Tantivy")
    assert edge is not None
    assert edge["source_id"] == DOC
    assert (edge["description"], edge["keywords"]) == ("embeds", "full-text")
    assert edge["weight"] == pytest.approx(1.0)
    assert "sg_assertions" not in edge and "chunk_hashes" not in edge
    # Tantivy stays too: LightRAG's edge and its source part hold it.
    assert world.graph.node_props("Tantivy")["source_id"] == DOC
    # LightRAG still reads both as its own.
    assert world.lightrag.node("Memgraph")["entity_type"] == "product"  # type: ignore[index]


def test_our_entity_on_a_lightrag_node_leaves_it_as_it_was(world: World) -> None:
    world.lightrag.ingest_entity("Memgraph", "organization", "the company", DOC)
    world.lightrag.ingest_entity("Tantivy", "library", "rust search", DOC)
    world.lightrag.ingest_relation("Memgraph", "Tantivy", "embeds", "full-text", DOC)
    before_node = dict(world.graph.node_props("Memgraph"))
    before_edge = dict(world.graph.edge_props("Memgraph", "Tantivy") or {})

    world.chunk(H1)
    world.extract(H1, [MEMGRAPH, TANTIVY], [USES])
    node = world.graph.node_props("Memgraph")
    assert node["entity_type"] == "organization"  # never overwritten
    assert node["source_id"] == f"{DOC}<SEP>{H1}"
    assert node["description"] == "the company<SEP>a graph database"
    assert node["file_path"] == "doc.md<SEP>sessions-graph"
    edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    assert edge["description"] == "embeds<SEP>indexes text with"
    assert edge["keywords"] == "full-text,search,text"
    assert edge["weight"] == pytest.approx(before_edge["weight"] + 1.0)

    world.collect(H1)
    after_node = world.graph.node_props("Memgraph")
    after_edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    for key in ("entity_type", "source_id", "description", "file_path"):
        assert after_node[key] == before_node[key], key
    for key in ("source_id", "description", "keywords", "file_path"):
        assert after_edge[key] == before_edge[key], key
    assert after_edge["weight"] == pytest.approx(before_edge["weight"])


def test_what_only_we_held_is_deleted(world: World) -> None:
    world.chunk(H1)
    world.extract(H1, [MEMGRAPH, TANTIVY], [USES])
    assert world.collect(H1) == (1, 2)
    assert world.graph.entity("Memgraph") is None and world.graph.entity("Tantivy") is None
    assert not world.graph.edges


def test_one_of_our_chunks_going_keeps_the_other_chunks_parts(world: World) -> None:
    world.chunk(H1)
    world.chunk(H2)
    world.extract(H1, [MEMGRAPH, TANTIVY], [USES])
    world.extract(
        H2,
        [{**MEMGRAPH, "description": "fast"}, TANTIVY],
        [{**USES, "description": "calls", "keywords": "rust"}],
    )
    edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    assert edge["chunk_hashes"] == [H1, H2] and edge["weight"] == pytest.approx(2.0)
    world.collect(H1)
    node = world.graph.node_props("Memgraph")
    assert node["source_id"] == H2 and node["description"] == "fast"
    edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    assert (edge["description"], edge["keywords"], edge["source_id"]) == ("calls", "rust", H2)
    assert edge["weight"] == pytest.approx(1.0)


def test_each_chunk_adds_its_relations_weight_or_one(world: World) -> None:
    """An edge's weight is the sum of its assertions' (LightRAG's own rule),
    each chunk's the weight its extraction gave, 1.0 when it gave none; the
    edge names the workspace it was written in."""
    world.chunk(H1)
    world.chunk(H2)
    world.extract(H1, [MEMGRAPH, TANTIVY], [{**USES, "weight": 2.5}])
    world.extract(H2, [MEMGRAPH, TANTIVY], [{k: v for k, v in USES.items() if k != "weight"}])
    edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    assert edge["weight"] == pytest.approx(3.5)
    assert edge["workspace"] == WS
    world.collect(H1)
    edge = world.graph.edge_props("Memgraph", "Tantivy") or {}
    assert edge["weight"] == pytest.approx(1.0)


def test_a_relationship_not_ours_keeps_an_entity_alive(world: World) -> None:
    world.chunk(H1)
    world.extract(H1, [MEMGRAPH], [])
    other = world.graph.add_node({"Document"}, {})
    world.graph.add_edge("MENTIONS", other, world.graph.entity("Memgraph") or 0)
    assert world.collect(H1) == (1, 0)
    node = world.graph.node_props("Memgraph")
    assert node["source_id"] == "" and "sg_added" not in node


# -- the field rules on their own -------------------------------------------------------------
def test_a_part_lightrag_already_had_is_never_ours_to_remove() -> None:
    value, added, others = fields.merge_field("x<SEP>y", [], ["y", "z"], "<SEP>")
    assert (value, added, others) == ("x<SEP>y<SEP>z", ["z"], ["x", "y"])
    value, added, _ = fields.merge_field(value, added, [], "<SEP>")
    assert (value, added) == ("x<SEP>y", [])


def test_a_legacy_node_without_bookkeeping_keeps_every_part() -> None:
    update = fields.entity_update({"source_id": "p<SEP>q", "description": "d"}, [], 0)
    assert update.action == fields.RELEASE
    assert update.fields["source_id"] == "p<SEP>q" and update.fields["description"] == "d"


def test_a_chunk_id_lightrag_wrote_back_after_we_removed_it_goes_at_our_next_update(
    world: World,
) -> None:
    """LightRAG reads a node and writes the merged node back in two separate
    transactions; our removal can fall in between and LightRAG restores our
    old part. It is ours by its shape (a SHA-256 hex digest, never a LightRAG
    chunk id), so our next update of the node takes it out again."""
    world.chunk(H1)
    world.extract(H1, [MEMGRAPH])
    world.lightrag.ingest_entity("Memgraph", "product", "an in-memory graph DB", DOC)
    stale = world.lightrag.node("Memgraph")
    assert stale is not None
    world.collect(H1)
    assert world.graph.node_props("Memgraph")["source_id"] == DOC
    # LightRAG's write of what it merged from its read before our removal
    # (its node_data: its own fields, never our bookkeeping).
    lightrag_fields = ("entity_id", "entity_type", "description", "source_id", "file_path")
    written = {k: stale[k] for k in lightrag_fields}
    asyncio.run(world.lightrag.storage.upsert_node("Memgraph", written))
    assert H1 in world.graph.node_props("Memgraph")["source_id"]

    world.chunk(H2)
    world.extract(H2, [MEMGRAPH])
    assert world.graph.node_props("Memgraph")["source_id"].split("<SEP>") == [DOC, H2]
