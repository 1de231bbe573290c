// A page of a session's actions in order: seq numbers are consecutive from
// 0, so a page is a seq range (no SKIP, which Memgraph's pages do not show).
MATCH (a:Action)
WHERE a.session_id = $session_id AND a.seq >= $start AND a.seq < $stop
RETURN a.action_id AS action_id, a.session_id AS session_id, a.seq AS seq,
       a.action_type AS action_type, a.text AS text, a.timestamp AS timestamp,
       a.tool_name AS tool_name, a.tool_use_id AS tool_use_id, a.is_error AS is_error,
       coalesce(a.origin, 'conversation') AS origin
ORDER BY seq
