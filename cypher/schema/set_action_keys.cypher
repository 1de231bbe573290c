// Actions stored before action ids were keyed per user (schema version 12)
// take their key, a batch at a time: their session owner's id, '|', their
// id (engines.base.action_key). Returns how many were keyed.
MATCH (s:Session)-[:HAS_ACTION]->(a:Action)
WHERE a.action_key IS NULL
WITH s, a
LIMIT $limit
SET a.action_key = s.user_id + '|' + a.action_id
RETURN count(a) AS keyed
