// Entities we no longer mention but something else holds (LightRAG's
// parts, or relationships not ours): our parts leave the shared fields, and
// our label and bookkeeping leave the node; the rest stays as it was.
UNWIND $rows AS row
MATCH (e:Entity)
WHERE id(e) = row.id
SET e.source_id = row.source_id, e.description = row.description,
    e.file_path = row.file_path
REMOVE e:Entity, e.sg_added, e.name_key, e.workspace
