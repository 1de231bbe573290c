// Move a user's sessions from a project's old key (its base name) to its
// full key, those whose cwd is the project's root or under it, with their
// memories still keyed by the old name (Engine.adopt_legacy_project).
MATCH (s:Session)
WHERE s.user_id = $user_id AND s.project_key = $legacy_key
  AND (s.cwd = $root OR s.cwd STARTS WITH ($root + '/'))
SET s.project_key = $project_key
WITH s
OPTIONAL MATCH (s)-[:PRODUCED_MEMORY]->(m:Memory)
WITH s, collect(m) AS memories
FOREACH (m IN [x IN memories WHERE x.project_key = $legacy_key] |
  SET m.project_key = $project_key)
RETURN count(s) AS moved
