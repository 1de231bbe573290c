// Tool results that answer a derived call (same tool_use_id in the same
// session) but are still marked conversation: derived too. One row per result.
// Starts from the derived actions (few, on the :Action(origin) index).
MATCH (c:Action {origin: 'derived'})
WHERE c.action_type = 'tool_call' AND c.tool_use_id IS NOT NULL
MATCH (r:Action {session_id: c.session_id, tool_use_id: c.tool_use_id})
WHERE r.action_type = 'tool_result' AND r.origin = 'conversation'
SET r.origin = 'derived'
RETURN r.session_id AS session_id
