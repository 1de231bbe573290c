// One EMA step of the user's weight of each element towards $target,
// clipped to [0, 1]; a weight not stored yet starts at 0.5.
UNWIND $keys AS key
MERGE (w:FeedbackWeight {user_id: $user_id, element_key: key})
ON CREATE SET w.weight = 0.5, w.ratings = 0
WITH w, w.weight + $alpha * ($target - w.weight) AS moved
SET w.weight = CASE WHEN moved < 0.0 THEN 0.0 WHEN moved > 1.0 THEN 1.0 ELSE moved END,
    w.ratings = w.ratings + 1, w.updated_at = $now
