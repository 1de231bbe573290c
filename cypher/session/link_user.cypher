MATCH (u:User {user_id: $user_id})
MATCH (s:Session {session_id: $session_id})
WHERE s.user_id = $user_id
MERGE (u)-[:HAD_SESSION]->(s)
