// A user's ledger rows, newest first; one session's when $session_id is set.
MATCH (i:Injection {user_id: $user_id})
WHERE $session_id IS NULL OR i.session_id = $session_id
RETURN i.injection_id AS injection_id, i.user_id AS user_id, i.session_id AS session_id,
       i.event AS event, i.injected_at AS injected_at, i.item_ids AS item_ids,
       i.tokens AS tokens
ORDER BY injected_at DESC, injection_id DESC
LIMIT $limit
