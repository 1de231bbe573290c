// Record the new content hash and drop the unit's chunk links; one row per
// link dropped, with the chunk it pointed at, for garbage collection. A
// plain MATCH, not OPTIONAL: deleting the null of a missing link is not
// something Memgraph documents.
MATCH (u:Action {action_key: $unit_id})
SET u.content_hash = $content_hash
WITH u
MATCH (u)-[r:HAS_CHUNK]->(c:Chunk)
WITH r, c.hash AS hash
DELETE r
RETURN hash
