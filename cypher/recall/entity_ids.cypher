// The entity nodes a question names (any workspace), for recall/entities to
// read one at a time.
MATCH (e:Entity)
WHERE e.name_key IN $name_keys
RETURN id(e) AS id, e.entity_id AS name
ORDER BY name, id
