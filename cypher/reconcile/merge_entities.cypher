// One node per (workspace, name) in LightRAG's shape: the workspace label,
// entity_id, entity_type. As in the embedded engine, entity_type is the
// first type any mention gave it (a node LightRAG made keeps its own); each
// chunk's own type and description live on its MENTIONED_IN, which is what
// users read. The shared fields (source_id, description, file_path) are
// merged with LightRAG's parts afterwards (reconcile/entity_state). name_key
// is the casefolded name entity_sessions matches. No unique constraint holds
// entity_id (it would fail LightRAG's ingest): where the workspace holds
// duplicates, MERGE finds and updates each, and the engine refreshes them all.
MATCH (c:Chunk {hash: $hash})
UNWIND $entities AS ent
MERGE (e:{workspace} {entity_id: ent.name})
ON CREATE SET e.created_at = $created_at
SET e:Entity, e.workspace = $workspace, e.name_key = ent.name_key,
    e.entity_type = coalesce(e.entity_type, ent.entity_type)
MERGE (e)-[m:MENTIONED_IN]->(c)
SET m.description = ent.description, m.entity_type = ent.mention_type
RETURN collect({name: ent.name, id: id(e)}) AS entities
