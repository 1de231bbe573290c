// Ordered in WITH: ORDER BY after RETURN sees only the returned names. An
// action unit's id is its key (the user's id and the action's).
MATCH (a:Action)
WHERE a.session_id = $session_id
WITH a ORDER BY a.seq
RETURN 'action' AS unit_kind, a.action_key AS unit_id, a.text AS text,
       a.action_type AS action_type, a.origin AS origin, a.content_hash AS content_hash
