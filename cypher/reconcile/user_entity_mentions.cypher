// The entities the given sessions of this user mention, in one read: each
// session's chunks once, then one row per (session, name) in any workspace,
// with the first mention type given in chunk-hash order and how many of the
// session's chunks (per workspace) mention the name, as session_mentions
// counts them. Only the user's own sessions, and memories of that user.
MATCH (s:Session)
WHERE s.session_id IN $session_ids AND s.user_id = $user_id
MATCH (s)-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)-[:HAS_CHUNK]->(c:Chunk)
WHERE NOT unit:Memory OR unit.user_id = $user_id
WITH DISTINCT s, c
MATCH (e:Entity)-[m:MENTIONED_IN]->(c)
WITH s, e, m, c
ORDER BY c.hash, e.workspace
WITH s.session_id AS session_id, e.entity_id AS name, collect(m.entity_type) AS types,
     count(*) AS mentions
RETURN session_id, name, head(types) AS entity_type, mentions
ORDER BY session_id, name
