// What was injected for a user: the tokens since $since, and each session's total.
MATCH (i:Injection {user_id: $user_id})
WITH i.session_id AS session_id, sum(i.tokens) AS tokens,
     sum(CASE WHEN i.injected_at >= $since THEN i.tokens ELSE 0 END) AS recent
RETURN collect(tokens) AS session_tokens, sum(recent) AS tokens_since
