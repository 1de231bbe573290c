// Entities as this session sees them: one row per mention in its own chunks.
// The engine groups them, so that descriptions join in chunk-hash order
// (collect() promises no order).
MATCH (:Session {session_id: $session_id})-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)
MATCH (unit)-[:HAS_CHUNK]->(c:Chunk)
WITH DISTINCT c
MATCH (e:Entity)-[m:MENTIONED_IN]->(c)
RETURN id(e) AS entity, e.entity_id AS name, e.workspace AS workspace,
       e.entity_type AS entity_type, m.description AS description, c.hash AS hash
