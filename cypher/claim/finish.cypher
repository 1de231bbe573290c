// Content that arrived during the run (version moved) sends the session
// back to pending instead of the status the run reports.
MATCH (s:Session {session_id: $session_id})
WHERE s.claim_owner = $owner AND s.reconciliation_status = $running
WITH s, CASE WHEN s.content_version <> s.claim_version THEN $pending ELSE $status END AS final
SET s.reconciliation_status = final,
    s.reconciled_at = CASE WHEN final = $reconciled THEN $finished_at ELSE s.reconciled_at END,
    s.reconciliation_error = $error,
    s.last_summary = $summary,
    s.claim_owner = null, s.claim_expires_at = null, s.claim_version = null
RETURN count(s) AS finished
