// Our entities as the merge with LightRAG's parts needs them: every
// property (the shared fields and sg_added, what we added to them), our
// mentions ({hash, description} per chunk; an entity with none yields one
// entry of nulls, which the engine drops) and how many relationships other
// than our mentions hold it. One id look-up per entity (UNWIND ... id(e) =
// w): before 3.12 `id(e) IN $list` scans every :Entity.
UNWIND $entity_ids AS wanted
MATCH (e:Entity)
WHERE id(e) = wanted
OPTIONAL MATCH (e)-[r]-()
WHERE type(r) <> 'MENTIONED_IN'
WITH e, count(r) AS others
OPTIONAL MATCH (e)-[m:MENTIONED_IN]->(c:Chunk)
WITH e, others, collect({hash: c.hash, description: m.description}) AS mentions
RETURN id(e) AS id, properties(e) AS props, mentions, others
