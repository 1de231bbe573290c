// The item ids of every injection into one session of one user (the hook's
// read at each prompt, on the :Injection(session_id) index).
MATCH (i:Injection {session_id: $session_id})
WHERE i.user_id = $user_id
RETURN i.item_ids AS item_ids
