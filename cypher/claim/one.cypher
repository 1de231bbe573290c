// Claim one named session in any status except running under a live lease.
// A session never queued has no status: coalesce keeps the comparison from
// being null, which WHERE NOT would turn into "not claimable".
MATCH (s:Session {session_id: $session_id})
WHERE NOT (coalesce(s.reconciliation_status, '') = $running AND s.claim_expires_at >= $now)
SET s.reconciliation_status = $running, s.claim_owner = $owner,
    s.claim_expires_at = $expires_at, s.claim_version = s.content_version
RETURN s.session_id AS session_id, s.user_id AS user_id, s.started_at AS started_at,
       s.ended_at AS ended_at, s.cwd AS cwd, s.project_key AS project_key,
       s.reconciliation_status AS reconciliation_status, s.reconciled_at AS reconciled_at,
       s.reconciliation_error AS reconciliation_error, s.last_summary AS last_summary,
       s.content_version AS content_version, s.action_count AS action_count
