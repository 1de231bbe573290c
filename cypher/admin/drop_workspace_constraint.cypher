// Builds before schema version 8 made entity_id unique in a workspace. That
// conflicts with LightRAG on a shared workspace (its batch upserts retry only
// transient errors, and a commit-time unique violation is a client error),
// so setup drops it where SHOW CONSTRAINT INFO lists it.
DROP CONSTRAINT ON (n:{workspace}) ASSERT n.entity_id IS UNIQUE
