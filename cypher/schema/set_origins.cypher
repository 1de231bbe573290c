// Store the origins setup read off a batch of actions.
UNWIND $marks AS m
MATCH (a:Action {action_key: m.action_key})
SET a.origin = m.origin
