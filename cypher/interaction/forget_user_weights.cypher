// Every feedback weight of a user.
MATCH (w:FeedbackWeight)
WHERE w.user_id = $user_id
DETACH DELETE w
RETURN count(*) AS deleted
