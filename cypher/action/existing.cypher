// Which of these action ids are stored already (delivery is at-least-once),
// and in which session: one held by another session stays there and is skipped.
UNWIND $action_ids AS action_id
MATCH (a:Action {action_id: action_id})
RETURN a.action_id AS action_id, a.session_id AS session_id
