MATCH (m:Memory {memory_id: $memory_id})
WHERE $user_id IS NULL OR m.user_id = $user_id
RETURN m.memory_id AS memory_id, m.user_id AS user_id, m.content AS content,
       m.session_id AS session_id, m.created_at AS created_at, m.updated_at AS updated_at,
       m.project_key AS project_key
