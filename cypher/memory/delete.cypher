// Returns the session to touch and the chunks that may now be orphans.
MATCH (m:Memory {memory_id: $memory_id})
WHERE $user_id IS NULL OR m.user_id = $user_id
OPTIONAL MATCH (m)-[:HAS_CHUNK]->(c:Chunk)
WITH m, m.session_id AS session_id, collect(c.hash) AS chunk_hashes
DETACH DELETE m
RETURN session_id, chunk_hashes
