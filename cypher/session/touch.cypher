// Content changed: bump the version; a finished reconciliation goes back to
// pending (a running one is sent back by finish, which compares versions).
MATCH (s:Session {session_id: $session_id})
SET s.content_version = coalesce(s.content_version, 0) + 1,
    s.action_count = coalesce(s.action_count, 0) + $added_actions,
    s.reconciliation_status = CASE
      WHEN s.reconciliation_status IN [$reconciled, $failed] THEN $pending
      ELSE s.reconciliation_status END
