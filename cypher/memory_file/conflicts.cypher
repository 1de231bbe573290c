// Files in the way of a new file at $path: at it, under it, or at a parent.
MATCH (m:MemoryFile)
WHERE m.user_id = $user_id
  AND (m.path = $path OR m.path STARTS WITH $under OR m.path IN $parents)
RETURN m.path AS path
