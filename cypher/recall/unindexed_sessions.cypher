// Sessions holding actions stored before the turn index existed, or before
// it held what recall weighs turns by (speaker and asks: schema version 4;
// tells_time: 5; only_asks: 14), or not stemmed (15), or without their Told
// Time (recall_told: 16), or whose
// long words were cut otherwise than now (recall_cut_bytes: 10; 40-character
// pieces before, which Tantivy dropped).
// Derived and client actions never get a document.
MATCH (s:Session)-[:HAS_ACTION]->(a:Action)
WHERE (a.recall_tells_time IS NULL OR a.recall_only_asks IS NULL OR a.recall_stemmed IS NULL
       OR a.recall_told IS NULL
       OR a.recall_cut_bytes IS NULL OR a.recall_cut_bytes <> $cut_bytes)
  AND coalesce(a.origin, 'conversation') = 'conversation'
RETURN DISTINCT s.session_id AS session_id, s.user_id AS user_id
