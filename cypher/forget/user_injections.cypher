// Delete every injection ledger row of a user (those of sessions already gone too).
MATCH (i:Injection {user_id: $user_id})
DETACH DELETE i
RETURN count(*) AS deleted
