// Chunks are keyed by content hash: MERGE shares one node among all units.
MATCH (u:Action {action_key: $unit_id})
UNWIND $chunks AS chunk
MERGE (c:Chunk {hash: chunk.hash})
ON CREATE SET c.text = chunk.text, c.extracted_in = []
CREATE (u)-[:HAS_CHUNK {position: chunk.position}]->(c)
