// Sessions holding actions stored before the turn index existed.
MATCH (s:Session)-[:HAS_ACTION]->(a:Action)
WHERE a.recall_body IS NULL
RETURN DISTINCT s.session_id AS session_id, s.user_id AS user_id
