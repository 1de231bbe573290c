MATCH (:Session {session_id: $session_id})-[:PRODUCED_MEMORY]->(m:Memory)
RETURN 'memory' AS unit_kind, m.memory_id AS unit_id, m.content AS text,
       m.content_hash AS content_hash
ORDER BY m.created_at, m.memory_id
