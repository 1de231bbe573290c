// MERGE the User and the Session; returns the session's owner so the caller
// can refuse a session that belongs to someone else.
MERGE (u:User {user_id: $user_id})
ON CREATE SET u.created_at = $now
MERGE (s:Session {session_id: $session_id})
ON CREATE SET s.user_id = $user_id, s.started_at = $now, s.content_version = 0,
              s.action_count = 0
RETURN s.user_id AS owner
