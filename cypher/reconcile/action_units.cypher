MATCH (a:Action)
WHERE a.session_id = $session_id
RETURN 'action' AS unit_kind, a.action_id AS unit_id, a.text AS text,
       a.content_hash AS content_hash
ORDER BY a.seq
