MATCH (m:Memory {memory_id: $memory_id})
MATCH (s:Session {session_id: $session_id})
CREATE (s)-[:PRODUCED_MEMORY]->(m)
