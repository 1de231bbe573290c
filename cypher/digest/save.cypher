// Store a session's digest on its Session node, unless the session is not
// $user_id's, or it holds the LLM's digest of the same action count and this
// one is offline (Engine.save_digest).
MATCH (s:Session {session_id: $session_id})
WHERE s.user_id = $user_id
  AND NOT (coalesce(s.digest_source, '') = 'llm' AND $source = 'offline'
           AND s.digest_action_count = $action_count)
SET s.digest = $body, s.digest_source = $source, s.digest_substance = $substance,
    s.digest_action_count = $action_count, s.digest_input_hash = $input_hash,
    s.digest_built_at = $built_at
RETURN count(s) AS saved
