// LightRAG looks entities up by entity_id under the workspace label.
CREATE INDEX ON :{workspace}(entity_id)
