// Entities as this session mentions them: one row per mention in its own
// chunks, with the mention's own type and description (never the entity
// node's merged ones, which other users' chunks may have shaped).
MATCH (:Session {session_id: $session_id})-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)
MATCH (unit)-[:HAS_CHUNK]->(c:Chunk)
WITH DISTINCT c
MATCH (e:Entity)-[m:MENTIONED_IN]->(c)
RETURN e.entity_id AS name, e.workspace AS workspace, m.entity_type AS entity_type,
       m.description AS description, c.hash AS chunk_hash
