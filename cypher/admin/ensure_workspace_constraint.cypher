// One node per entity_id in a workspace, even when two runs MERGE the same new
// entity at once: without it both CREATE, since new nodes do not conflict.
// The loser fails at commit ("unique constraint violation") and is re-run,
// then its MERGE finds the winner's node.
CREATE CONSTRAINT ON (n:{workspace}) ASSERT n.entity_id IS UNIQUE
