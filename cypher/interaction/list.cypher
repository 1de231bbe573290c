// The user's live interactions, of one session or all, newest first.
MATCH (i:Interaction)
WHERE i.user_id = $user_id
  AND ($session_id IS NULL OR i.session_id = $session_id)
  AND (i.expires_at IS NULL OR i.expires_at > $now)
  AND (NOT $unanswered OR i.answer IS NULL)
RETURN i.interaction_id AS interaction_id, i.user_id AS user_id, i.session_id AS session_id,
       i.source AS source, i.created_at AS created_at, i.expires_at AS expires_at,
       i.question AS question, i.context AS context, i.answer AS answer,
       i.answered_at AS answered_at, i.feedback AS feedback, i.seq_from AS seq_from
ORDER BY created_at DESC, interaction_id DESC
LIMIT $limit
