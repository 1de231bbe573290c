// Actions stored before origins were kept (schema version 6), a batch at a
// time: setup classifies them with provenance.origin.
MATCH (a:Action)
WHERE a.origin IS NULL
RETURN a.action_id AS action_id, a.session_id AS session_id, a.action_type AS action_type,
       a.text AS text, a.tool_name AS tool_name
LIMIT $limit
