// The shared fields merged with LightRAG's parts, and the parts we added.
UNWIND $rows AS row
MATCH (e:Entity)
WHERE id(e) = row.id
SET e.source_id = row.source_id, e.description = row.description,
    e.file_path = row.file_path, e.sg_added = row.added
