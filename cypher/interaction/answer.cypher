// The answer to one of the user's live interactions, with its context's
// used marks and their count.
MATCH (i:Interaction {interaction_id: $interaction_id})
WHERE i.user_id = $user_id AND (i.expires_at IS NULL OR i.expires_at > $now)
SET i.answer = $answer, i.answered_at = $now, i.context = $context,
    i.items = $items, i.used = $used
RETURN count(i) AS changed
