// Take the turn documents off a session's derived and client actions (their
// text stays: fidelity); one row per action, whose chunks the caller drops.
MATCH (a:Action)
WHERE a.session_id = $session_id AND coalesce(a.origin, 'conversation') <> 'conversation'
REMOVE a.recall_body, a.recall_context, a.user_key, a.recall_speaker, a.recall_asks,
       a.recall_only_asks, a.recall_tells_time, a.recall_told_since, a.recall_told_until,
       a.recall_told
RETURN a.action_key AS action_key
