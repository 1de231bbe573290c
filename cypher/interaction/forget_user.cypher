// Every interaction of a user.
MATCH (i:Interaction)
WHERE i.user_id = $user_id
DETACH DELETE i
RETURN count(*) AS deleted
