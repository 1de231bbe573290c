// The conversation actions around each of the user's hit actions, for its
// snippet (derived and client ones are never given back). $action_keys: the
// hits' keys (the user's id and the action's).
UNWIND $action_keys AS hit_key
MATCH (h:Action {action_key: hit_key})
MATCH (s:Session {session_id: h.session_id})
WHERE s.user_id = $user_id
MATCH (a:Action)
WHERE a.session_id = h.session_id AND a.seq >= h.seq - $radius AND a.seq <= h.seq + $radius
  AND coalesce(a.origin, 'conversation') = 'conversation'
RETURN h.action_id AS hit_id, a.action_id AS action_id, a.session_id AS session_id,
       a.seq AS seq, a.action_type AS action_type, a.text AS text, a.timestamp AS timestamp,
       a.tool_name AS tool_name, a.tool_use_id AS tool_use_id, a.is_error AS is_error,
       'conversation' AS origin
