// The user's stored weights of some elements.
UNWIND $keys AS key
MATCH (w:FeedbackWeight {element_key: key})
WHERE w.user_id = $user_id
RETURN w.element_key AS element_key, w.weight AS weight
