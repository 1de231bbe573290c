// One injection ledger row; linked to its session when the session is the
// user's (the hook records the event before it injects, so it usually is).
CREATE (i:Injection {injection_id: $injection_id, user_id: $user_id,
                     session_id: $session_id, event: $event,
                     injected_at: $injected_at, item_ids: $item_ids, tokens: $tokens})
WITH i
OPTIONAL MATCH (s:Session {session_id: $session_id})
WHERE s.user_id = $user_id
FOREACH (x IN CASE WHEN s IS NULL THEN [] ELSE [s] END | CREATE (x)-[:RECEIVED]->(i))
RETURN i.injection_id AS injection_id
