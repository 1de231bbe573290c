// Recall's keyword lane: the user's turns through action_recall_index.
// $query always starts with "+data.user_key:<key>", so the procedure's limit
// only ever counts this user's matches; the session owner check is a second
// guard. The filters (Engine.search_turns) run after the search: they can
// only narrow the user's own top $search_limit.
CALL text_search.search('action_recall_index', $query, {limit: $search_limit})
YIELD node, score
WITH node AS a, score
MATCH (s:Session {session_id: a.session_id})
WHERE s.user_id = $user_id
  AND coalesce(a.origin, 'conversation') = 'conversation'
  AND ($exclude IS NULL OR s.session_id <> $exclude)
  AND ($only IS NULL OR s.session_id = $only)
WITH a, s, score, coalesce(a.timestamp, s.started_at) AS ts
WHERE ($since IS NULL OR ts >= $since) AND ($until IS NULL OR ts <= $until)
  // The dates lane's window of Told Time: the turn tells of a time in it
  // (recall_told_since / recall_told_until, [since, until)).
  AND ($told_since IS NULL
       OR (a.recall_told_since < $told_until AND a.recall_told_until > $told_since))
  AND ($project IS NULL OR s.project_key = $project OR s.cwd = $project
       OR s.cwd STARTS WITH $project_dir)
RETURN a.action_id AS action_id, a.session_id AS session_id, a.action_type AS action_type,
       a.recall_speaker AS speaker, coalesce(a.recall_asks, false) AS asks,
       coalesce(a.recall_only_asks, false) AS only_asks,
       coalesce(a.recall_tells_time, false) AS tells_time,
       ts AS timestamp, score
ORDER BY score DESC
