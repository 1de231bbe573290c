// Actions stored before origins were kept (schema version 6), a batch at a
// time: setup classifies them with provenance.origin (after keying them:
// schema/set_action_keys).
MATCH (:Session)-[:HAS_ACTION]->(a:Action)
WHERE a.origin IS NULL
RETURN a.action_key AS action_key, a.session_id AS session_id, a.action_type AS action_type,
       a.text AS text, a.tool_name AS tool_name
LIMIT $limit
