// end_session / mark_pending: queue for reconciliation unless a run holds it.
MATCH (s:Session {session_id: $session_id})
SET s.content_version = coalesce(s.content_version, 0) + 1,
    s.ended_at = coalesce($ended_at, s.ended_at),
    s.reconciliation_status = CASE
      WHEN s.reconciliation_status = $running THEN $running ELSE $pending END
RETURN count(s) AS found
