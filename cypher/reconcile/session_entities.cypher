// Entities as this session sees them: only its own chunks' mentions.
MATCH (:Session {session_id: $session_id})-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)
MATCH (unit)-[:HAS_CHUNK]->(c:Chunk)
WITH DISTINCT c
MATCH (e:Entity)-[m:MENTIONED_IN]->(c)
RETURN e.entity_id AS name, e.workspace AS workspace,
       collect(m.entity_type) AS entity_types, collect(m.description) AS descriptions,
       count(DISTINCT c) AS mentions
ORDER BY name, workspace
