// The digests of those of $session_ids that are $user_id's.
UNWIND $session_ids AS wanted
MATCH (s:Session {session_id: wanted})
WHERE s.user_id = $user_id AND s.digest IS NOT NULL
RETURN s.session_id AS session_id, s.user_id AS user_id, s.digest_source AS source,
       s.digest_substance AS substance, s.digest AS body,
       s.digest_action_count AS action_count, s.digest_input_hash AS input_hash,
       s.digest_built_at AS built_at
