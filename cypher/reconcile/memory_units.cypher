// Ordered in WITH: ORDER BY after RETURN sees only the returned names.
MATCH (:Session {session_id: $session_id})-[:PRODUCED_MEMORY]->(m:Memory)
WITH m ORDER BY m.created_at, m.memory_id
RETURN 'memory' AS unit_kind, m.memory_id AS unit_id, m.content AS text,
       m.content_hash AS content_hash
