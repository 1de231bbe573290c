// Saving a chunk again replaces what it said in this workspace: drop its
// mentions and take its hash off the relations it contributed to.
MATCH (c:Chunk {hash: $hash})
OPTIONAL MATCH (e:Entity)-[m:MENTIONED_IN]->(c)
WHERE e.workspace = $workspace
DELETE m
RETURN collect(id(e)) AS entity_ids
