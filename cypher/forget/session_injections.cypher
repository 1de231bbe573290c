// Delete a session's injection ledger rows.
MATCH (i:Injection {session_id: $session_id})
DETACH DELETE i
RETURN count(*) AS deleted
