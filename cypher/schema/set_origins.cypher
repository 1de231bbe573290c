// Store the origins setup read off a batch of actions.
UNWIND $marks AS m
MATCH (a:Action {action_id: m.action_id})
SET a.origin = m.origin
