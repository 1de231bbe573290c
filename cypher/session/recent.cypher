// A user's sessions, newest first (of one project when $project_key is set:
// its key, or a directory, holding the sessions whose cwd is it or below it,
// started before $before when set), each with its first user message and its
// last assistant message, cut to $preview_chars. The first / last are picked
// with reduce over seq rather than by ORDER BY before collect, whose order
// the documentation does not promise. (substring: querying/functions.)
// Conversation actions only: a preview never quotes our Injected Context or
// the client's boilerplate back.
MATCH (:User {user_id: $user_id})-[:HAD_SESSION]->(s:Session)
WHERE s.user_id = $user_id
  AND ($project_key IS NULL OR s.project_key = $project_key OR s.cwd = $project_key
       OR s.cwd STARTS WITH $project_dir)
  AND ($before IS NULL OR s.started_at < $before)
WITH s
ORDER BY s.started_at DESC, s.session_id DESC
LIMIT $limit
OPTIONAL MATCH (s)-[:HAS_ACTION]->(asked:Action {action_type: 'user_message'})
WHERE coalesce(asked.origin, 'conversation') = 'conversation'
WITH s, collect(asked) AS asks
OPTIONAL MATCH (s)-[:HAS_ACTION]->(said:Action {action_type: 'assistant_message'})
WHERE coalesce(said.origin, 'conversation') = 'conversation'
WITH s, asks, collect(said) AS answers
WITH s,
     reduce(best = null, a IN asks |
            CASE WHEN best IS NULL OR a.seq < best.seq THEN a ELSE best END) AS first,
     reduce(best = null, a IN answers |
            CASE WHEN best IS NULL OR a.seq > best.seq THEN a ELSE best END) AS last
RETURN s.session_id AS session_id, s.user_id AS user_id, s.started_at AS started_at,
       s.ended_at AS ended_at, s.cwd AS cwd, s.project_key AS project_key,
       s.action_count AS action_count,
       CASE WHEN first IS NULL THEN null
            ELSE substring(first.text, 0, $preview_chars) END AS first_user_message,
       CASE WHEN first IS NULL THEN null ELSE first.timestamp END AS first_user_message_at,
       CASE WHEN first IS NULL THEN null ELSE first.action_id END AS first_user_message_id,
       CASE WHEN last IS NULL THEN null
            ELSE substring(last.text, 0, $preview_chars) END AS last_assistant_message,
       CASE WHEN last IS NULL THEN null ELSE last.timestamp END AS last_assistant_message_at,
       CASE WHEN last IS NULL THEN null ELSE last.action_id END AS last_assistant_message_id
ORDER BY started_at DESC, session_id DESC
