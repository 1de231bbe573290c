// Delete a session's actions; returns their chunks for garbage collection.
MATCH (a:Action)
WHERE a.session_id = $session_id
OPTIONAL MATCH (a)-[:HAS_CHUNK]->(c:Chunk)
WITH a, collect(c.hash) AS chunk_hashes
DETACH DELETE a
RETURN chunk_hashes
