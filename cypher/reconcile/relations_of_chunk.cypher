// The relations a chunk of ours asserts among these entities, with every
// property (per-chunk assertions in sg_assertions); an edge may come back
// once per end, and the engine keys edges by their two ends. Each entity is
// found by its id (UNWIND ... id(a) = w): before 3.12 `id(a) IN $list`
// scans every :Entity.
UNWIND $entity_ids AS wanted
MATCH (a:Entity)
WHERE id(a) = wanted
MATCH (a)-[r:DIRECTED]-(b)
WHERE $hash IN coalesce(r.chunk_hashes, [])
RETURN id(a) AS a_id, id(b) AS b_id, properties(r) AS props
