MATCH (m:Memory)
WHERE m.session_id = $session_id
OPTIONAL MATCH (m)-[:HAS_CHUNK]->(c:Chunk)
WITH m, collect(c.hash) AS chunk_hashes
DETACH DELETE m
RETURN chunk_hashes
