// The user's memory files at a path or under it ($under is the path + "/").
MATCH (m:MemoryFile)
WHERE m.user_id = $user_id AND (m.path = $path OR m.path STARTS WITH $under)
RETURN m.path AS path, m.memory_id AS memory_id, size(m.content) AS size,
       m.updated_at AS updated_at, m.version AS version
ORDER BY path
