// Which of these action keys (the user's id and the action's) are stored
// already (delivery is at-least-once), and in which of the user's sessions:
// one held by another session stays there and is skipped.
UNWIND $action_keys AS action_key
MATCH (a:Action {action_key: action_key})
RETURN a.action_id AS action_id, a.session_id AS session_id
