// LightRAG keeps one undirected DIRECTED edge per entity pair; chunk_hashes
// records which chunks asserted it, so re-saving a chunk can retract it.
UNWIND $relations AS rel
MATCH (a:{workspace} {entity_id: rel.source})
MATCH (b:{workspace} {entity_id: rel.target})
MERGE (a)-[r:DIRECTED]-(b)
SET r.description = rel.description, r.keywords = rel.keywords, r.weight = rel.weight,
    r.workspace = $workspace, r.file_path = $file_path,
    r.created_at = coalesce(r.created_at, $created_at),
    r.chunk_hashes = CASE WHEN $hash IN coalesce(r.chunk_hashes, [])
                          THEN r.chunk_hashes ELSE coalesce(r.chunk_hashes, []) + [$hash] END
WITH r
SET r.source_id = reduce(acc = '', h IN r.chunk_hashes |
      CASE WHEN acc = '' THEN h ELSE acc + $sep + h END)
