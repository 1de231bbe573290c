// Of these chunks, delete those no unit points at any more (with their
// mentions); returns the entities they mentioned, for gc_entities.
UNWIND $hashes AS hash
MATCH (c:Chunk {hash: hash})
OPTIONAL MATCH (unit)-[:HAS_CHUNK]->(c)
WITH c, count(unit) AS refs
WHERE refs = 0
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
WITH c, collect(id(e)) AS entity_ids
DETACH DELETE c
RETURN entity_ids
