// The session's derived tool calls among $tool_use_ids: a tool result that
// answers one is derived too (provenance.mark).
MATCH (a:Action)
WHERE a.session_id = $session_id AND a.action_type = 'tool_call' AND a.origin = 'derived'
  AND a.tool_use_id IN $tool_use_ids
RETURN a.tool_use_id AS tool_use_id
