MATCH (s:Session {session_id: $session_id})
DETACH DELETE s
RETURN count(*) AS deleted
