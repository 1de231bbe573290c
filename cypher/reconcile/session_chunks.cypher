// The session's chunks in unit order: actions by seq, then memories by age.
MATCH (a:Action)
WHERE a.session_id = $session_id
MATCH (a)-[r:HAS_CHUNK]->(c:Chunk)
RETURN c.hash AS hash, c.text AS text, coalesce(c.extracted_in, []) AS extracted_in,
       0 AS part, a.seq AS unit_order, '' AS unit_key, r.position AS position
UNION ALL
MATCH (:Session {session_id: $session_id})-[:PRODUCED_MEMORY]->(m:Memory)-[r:HAS_CHUNK]->(c:Chunk)
RETURN c.hash AS hash, c.text AS text, coalesce(c.extracted_in, []) AS extracted_in,
       1 AS part, 0 AS unit_order, m.created_at + m.memory_id AS unit_key,
       r.position AS position
