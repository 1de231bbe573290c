MATCH (u:User {user_id: $user_id})
DETACH DELETE u
RETURN count(*) AS deleted
