// Relations no chunk of ours asserts any more but LightRAG's parts hold:
// our parts leave the shared fields, our bookkeeping leaves the edge.
UNWIND $rows AS row
MATCH (a)
WHERE id(a) = row.a_id
MATCH (b)
WHERE id(b) = row.b_id
MATCH (a)-[r:DIRECTED]-(b)
WITH DISTINCT r, row
SET r.description = row.description, r.keywords = row.keywords, r.weight = row.weight,
    r.source_id = row.source_id, r.file_path = row.file_path
REMOVE r.chunk_hashes, r.sg_assertions, r.sg_added, r.workspace
