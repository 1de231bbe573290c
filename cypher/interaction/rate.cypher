// The user's rating of one of their live interactions.
MATCH (i:Interaction {interaction_id: $interaction_id})
WHERE i.user_id = $user_id AND (i.expires_at IS NULL OR i.expires_at > $now)
SET i.feedback = $score, i.rated_at = $now
RETURN count(i) AS changed
