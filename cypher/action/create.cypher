MATCH (s:Session {session_id: $session_id})
UNWIND $actions AS row
CREATE (a:Action {
  action_key: row.action_key, action_id: row.action_id, session_id: $session_id, seq: row.seq,
  action_type: row.action_type, text: row.text, timestamp: row.timestamp,
  tool_name: row.tool_name, tool_use_id: row.tool_use_id, is_error: row.is_error,
  redactions: row.redactions, origin: row.origin
})
CREATE (s)-[:HAS_ACTION]->(a)
