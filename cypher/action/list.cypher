MATCH (a:Action)
WHERE a.session_id = $session_id
RETURN a.action_id AS action_id, a.session_id AS session_id, a.seq AS seq,
       a.action_type AS action_type, a.text AS text, a.timestamp AS timestamp,
       a.tool_name AS tool_name, a.tool_use_id AS tool_use_id, a.is_error AS is_error,
       a.redactions AS redactions, coalesce(a.origin, 'conversation') AS origin
ORDER BY seq
