// memory/search for Memgraph 3.6-3.10, whose text_search.search takes its
// limit as a positional INTEGER (the config map came in 3.11). Otherwise
// identical: $query always starts with "+data.user_key:<key>", so the limit
// only ever counts this user's matches.
CALL text_search.search('memory_content_index', $query, $search_limit)
YIELD node, score
WITH node AS m, score
WHERE m.user_id = $user_id
RETURN m.memory_id AS memory_id, m.user_id AS user_id, m.content AS content,
       m.session_id AS session_id, m.created_at AS created_at, m.updated_at AS updated_at,
       m.project_key AS project_key,
       score
ORDER BY score DESC, created_at DESC
