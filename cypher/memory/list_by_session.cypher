MATCH (m:Memory)
WHERE m.session_id = $session_id
RETURN m.memory_id AS memory_id, m.user_id AS user_id, m.content AS content,
       m.session_id AS session_id, m.created_at AS created_at, m.updated_at AS updated_at,
       m.project_key AS project_key
ORDER BY created_at DESC, memory_id DESC
LIMIT $limit
