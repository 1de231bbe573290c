// Link a memory to the session that produced it.
MATCH (m:Memory {memory_id: $memory_id})
MATCH (s:Session {session_id: $session_id})
CREATE (s)-[:PRODUCED_MEMORY]->(m)
// A memory saved with no project of its own is its session's.
SET m.project_key = coalesce(m.project_key, s.project_key)
