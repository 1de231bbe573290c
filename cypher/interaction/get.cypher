// One of the user's live interactions.
MATCH (i:Interaction {interaction_id: $interaction_id})
WHERE i.user_id = $user_id AND (i.expires_at IS NULL OR i.expires_at > $now)
RETURN i.interaction_id AS interaction_id, i.user_id AS user_id, i.session_id AS session_id,
       i.source AS source, i.created_at AS created_at, i.expires_at AS expires_at,
       i.question AS question, i.context AS context, i.answer AS answer,
       i.answered_at AS answered_at, i.feedback AS feedback, i.seq_from AS seq_from
