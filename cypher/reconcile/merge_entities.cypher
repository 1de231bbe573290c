// One node per (workspace, name) in LightRAG's shape: the workspace label,
// entity_id, entity_type, description, source_id, file_path. The
// per-chunk description lives on MENTIONED_IN, which is what users read.
MATCH (c:Chunk {hash: $hash})
UNWIND $entities AS ent
MERGE (e:{workspace} {entity_id: ent.name})
ON CREATE SET e.created_at = $created_at, e.file_path = $file_path
SET e:Entity, e.workspace = $workspace, e.name_lower = ent.name_lower,
    e.entity_type = ent.entity_type
MERGE (e)-[m:MENTIONED_IN]->(c)
SET m.description = ent.description, m.entity_type = ent.entity_type
RETURN collect(id(e)) AS entity_ids
