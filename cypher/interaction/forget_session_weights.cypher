// The session owner's weights of the session's own turns and memories;
// run before those are deleted.
MATCH (s:Session {session_id: $session_id})
OPTIONAL MATCH (a:Action) WHERE a.session_id = $session_id
WITH s, collect('turn:' + a.action_id) AS turns
OPTIONAL MATCH (m:Memory) WHERE m.session_id = $session_id
WITH s, turns + collect('memory:' + m.memory_id) AS keys
UNWIND keys AS key
MATCH (w:FeedbackWeight {element_key: key})
WHERE w.user_id = s.user_id
DETACH DELETE w
RETURN count(*) AS deleted
