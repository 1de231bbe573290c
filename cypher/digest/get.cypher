// A session's digest, if it has one.
MATCH (s:Session {session_id: $session_id})
WHERE s.digest IS NOT NULL
RETURN s.session_id AS session_id, s.user_id AS user_id, s.digest_source AS source,
       s.digest_substance AS substance, s.digest AS body,
       s.digest_action_count AS action_count, s.digest_input_hash AS input_hash,
       s.digest_built_at AS built_at
