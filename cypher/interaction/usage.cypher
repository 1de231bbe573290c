// Per session, the user's live interactions: answered, rated, and of the
// answered ones' context items, those the answer used.
MATCH (i:Interaction)
WHERE i.user_id = $user_id AND (i.expires_at IS NULL OR i.expires_at > $now)
WITH i.session_id AS session_id, count(i) AS interactions, count(i.answer) AS answered,
     count(i.feedback) AS rated,
     sum(CASE WHEN i.answer IS NULL THEN 0 ELSE i.items END) AS items,
     sum(CASE WHEN i.answer IS NULL THEN 0 ELSE i.used END) AS used,
     max(i.created_at) AS last_at
RETURN session_id, interactions, answered, rated, items, used
ORDER BY last_at DESC, session_id DESC
LIMIT $limit
