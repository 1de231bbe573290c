MATCH (s:Session {session_id: $session_id})
WHERE s.claim_owner = $owner AND s.reconciliation_status = $running
SET s.claim_expires_at = $expires_at
RETURN count(s) AS renewed
