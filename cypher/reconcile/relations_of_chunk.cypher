// The relations a chunk of ours asserts among these entities, with every
// property (per-chunk assertions in sg_assertions); an edge may come back
// once per end, and the engine keys edges by their two ends.
MATCH (a:Entity)-[r:DIRECTED]-(b)
WHERE id(a) IN $entity_ids AND ($hash IN coalesce(r.chunk_hashes, []))
RETURN id(a) AS a_id, id(b) AS b_id, properties(r) AS props
