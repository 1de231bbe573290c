// A session's actions from the $before-th conversation action before
// $first_seq on (all of them if there are fewer), with their text, origin and
// when they were said (their timestamp, else the session's start: Told Time):
// what the turn index needs to (re)write the documents of the actions from
// $first_seq on and their neighbours' (conversation ones only:
// provenance.conversation_rows). Neighbours are counted among conversation
// actions, so the derived and client ones between them are skipped here.
OPTIONAL MATCH (p:Action)
WHERE p.session_id = $session_id AND p.seq < $first_seq
  AND coalesce(p.origin, 'conversation') = 'conversation'
WITH p.seq AS before_seq
ORDER BY before_seq DESC
LIMIT $before
WITH coalesce(min(before_seq), $first_seq) AS from_seq
MATCH (a:Action)
WHERE a.session_id = $session_id AND a.seq >= from_seq
OPTIONAL MATCH (s:Session {session_id: $session_id})
RETURN a.action_id AS action_id, a.seq AS seq, a.text AS text, a.action_type AS action_type,
       a.origin AS origin, coalesce(a.timestamp, s.started_at) AS said_at
ORDER BY seq
