// Where the next actions go: the count (next seq) and the last action; and
// the owner, so that nobody appends to another user's session.
MATCH (s:Session {session_id: $session_id})
OPTIONAL MATCH (s)-[:HAS_ACTION]->(a:Action)
WHERE a.seq = s.action_count - 1
RETURN s.action_count AS action_count, a.action_key AS last_action_key, s.user_id AS owner
