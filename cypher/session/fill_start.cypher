// A repeated start keeps the earliest started_at (timestamps sort as text)
// and only fills what was unset.
MATCH (s:Session {session_id: $session_id})
SET s.cwd = coalesce(s.cwd, $cwd), s.project_key = coalesce(s.project_key, $project_key),
    s.started_at = CASE WHEN s.started_at IS NULL OR $started_at < s.started_at
                        THEN $started_at ELSE s.started_at END
