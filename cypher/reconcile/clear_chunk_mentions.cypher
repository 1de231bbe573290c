// Saving a chunk again replaces what it said in this workspace: drop its
// mentions, one row per mention dropped with the entity it named (a plain
// MATCH: no null relationship is ever deleted).
MATCH (e:Entity)-[m:MENTIONED_IN]->(:Chunk {hash: $hash})
WHERE e.workspace = $workspace
WITH m, id(e) AS entity_id
DELETE m
RETURN entity_id
