// A repeated start keeps started_at and only fills what was unset.
MATCH (s:Session {session_id: $session_id})
SET s.cwd = coalesce(s.cwd, $cwd), s.project_key = coalesce(s.project_key, $project_key)
