// One user's share of the store, as `status` shows it to that user: their
// sessions, actions and memories, and the chunks their own units link to and
// the entities those chunks mention (chunks and entities are shared by
// content; other users' are never counted).
OPTIONAL MATCH (s:Session {user_id: $user_id})
WITH collect(s) AS sessions
OPTIONAL MATCH (m:Memory {user_id: $user_id})
WITH sessions, collect(m) AS memories
UNWIND CASE WHEN size(sessions) = 0 THEN [null] ELSE sessions END AS s
OPTIONAL MATCH (s)-[:HAS_ACTION]->(a:Action)
WITH sessions, memories, collect(a) AS actions
WITH sessions, memories, actions, actions + memories AS units
UNWIND CASE WHEN size(units) = 0 THEN [null] ELSE units END AS unit
OPTIONAL MATCH (unit)-[:HAS_CHUNK]->(c:Chunk)
WITH sessions, memories, actions, collect(DISTINCT c) AS chunks
UNWIND CASE WHEN size(chunks) = 0 THEN [null] ELSE chunks END AS c
OPTIONAL MATCH (e:Entity)-[:MENTIONED_IN]->(c)
RETURN size(sessions) AS sessions, size(actions) AS actions, size(memories) AS memories,
       size(chunks) AS chunks, count(DISTINCT e) AS entities
