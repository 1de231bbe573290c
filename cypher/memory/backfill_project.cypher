// Memories saved before they carried a project take their session's
// (schema version 6); run by setup, idempotent.
MATCH (s:Session)-[:PRODUCED_MEMORY]->(m:Memory)
WHERE m.project_key IS NULL AND s.project_key IS NOT NULL
SET m.project_key = s.project_key
RETURN count(m) AS filled
