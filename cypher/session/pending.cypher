MATCH (s:Session)
WHERE s.reconciliation_status = $pending
   OR ($include_failed AND s.reconciliation_status = $failed)
   OR (s.reconciliation_status = $running AND s.claim_expires_at < $now)
WITH s ORDER BY coalesce(s.ended_at, s.started_at), s.session_id LIMIT $limit
RETURN s.session_id AS session_id, s.user_id AS user_id, s.started_at AS started_at,
       s.ended_at AS ended_at, s.cwd AS cwd, s.project_key AS project_key,
       s.reconciliation_status AS reconciliation_status, s.reconciled_at AS reconciled_at,
       s.reconciliation_error AS reconciliation_error, s.last_summary AS last_summary,
       s.content_version AS content_version, s.action_count AS action_count
