// A session's actions from $from_seq on, with their text and origin: what the
// turn index needs to (re)write those turns' documents and their neighbours'
// (conversation ones only: provenance.conversation_rows).
MATCH (a:Action)
WHERE a.session_id = $session_id AND a.seq >= $from_seq
RETURN a.action_id AS action_id, a.seq AS seq, a.text AS text, a.action_type AS action_type,
       a.origin AS origin
ORDER BY seq
