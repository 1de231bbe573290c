MATCH (s:Session)
WHERE s.user_id = $user_id
RETURN s.session_id AS session_id
