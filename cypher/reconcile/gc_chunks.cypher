// Of these chunks, delete those no unit points at any more (with their
// mentions); one row per deleted chunk with the entities that mentioned it,
// whose relations and mentions the caller then tidies. id() is applied to
// collected nodes only, never to the null of an OPTIONAL MATCH.
UNWIND $hashes AS wanted
MATCH (c:Chunk {hash: wanted})
OPTIONAL MATCH (unit)-[:HAS_CHUNK]->(c)
WITH c, count(unit) AS refs
WHERE refs = 0
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
WITH c, c.hash AS hash, collect(e) AS mentioned
DETACH DELETE c
RETURN hash, reduce(ids = [], x IN mentioned | ids + [id(x)]) AS entity_ids
