// Drop the unit's chunk links and record the new content hash; returns the
// chunks it used to point at, for garbage collection.
MATCH (u:Action {action_id: $unit_id})
SET u.content_hash = $content_hash
WITH u
OPTIONAL MATCH (u)-[r:HAS_CHUNK]->(c:Chunk)
DELETE r
RETURN collect(c.hash) AS old_hashes
