// The DIRECTED edge between each pair of entities a chunk asserts a
// relation between, if there is one (ours, LightRAG's, or both).
UNWIND $pairs AS pair
MATCH (a)
WHERE id(a) = pair.a
MATCH (b)
WHERE id(b) = pair.b
MATCH (a)-[r:DIRECTED]-(b)
RETURN id(a) AS a_id, id(b) AS b_id, properties(r) AS props
