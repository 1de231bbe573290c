// The files a rename or delete of $path takes: at it, or under it.
MATCH (m:MemoryFile)
WHERE m.user_id = $user_id AND (m.path = $path OR m.path STARTS WITH $under)
RETURN m.memory_id AS memory_id, m.path AS path, m.version AS version,
       m.content AS content, m.versions AS versions
