// A session's interactions.
MATCH (i:Interaction)
WHERE i.session_id = $session_id
DETACH DELETE i
RETURN count(*) AS deleted
