// The session owner's weights of the session's own turns and memories;
// run before those are deleted. The two lists are joined in the UNWIND, not
// in the WITH that collects the second: FalkorDB (which the tests run these
// statements on) cannot mix an aggregate with a grouping key in one expression.
MATCH (s:Session {session_id: $session_id})
OPTIONAL MATCH (a:Action) WHERE a.session_id = $session_id
WITH s, collect('turn:' + a.action_id) AS turns
OPTIONAL MATCH (m:Memory) WHERE m.session_id = $session_id
WITH s, turns, collect('memory:' + m.memory_id) AS memories
UNWIND turns + memories AS key
MATCH (w:FeedbackWeight {element_key: key})
WHERE w.user_id = s.user_id
DETACH DELETE w
RETURN count(*) AS deleted
