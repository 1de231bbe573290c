// LightRAG keeps one undirected DIRECTED edge per entity pair: MERGE it and
// write the shared fields merged with LightRAG's parts, our per-chunk
// assertions (sg_assertions; chunk_hashes lists their chunks) and the parts
// we added (sg_added).
UNWIND $rows AS row
MATCH (a)
WHERE id(a) = row.a_id
MATCH (b)
WHERE id(b) = row.b_id
MERGE (a)-[r:DIRECTED]-(b)
SET r.created_at = coalesce(r.created_at, $created_at),
    r.description = row.description, r.keywords = row.keywords, r.weight = row.weight,
    r.source_id = row.source_id, r.file_path = row.file_path, r.workspace = row.workspace,
    r.chunk_hashes = row.chunk_hashes, r.sg_assertions = row.assertions,
    r.sg_added = row.added
