// Relations only our chunks asserted, none of which asserts them any more.
UNWIND $rows AS row
MATCH (a)
WHERE id(a) = row.a_id
MATCH (b)
WHERE id(b) = row.b_id
MATCH (a)-[r:DIRECTED]-(b)
WITH DISTINCT r
DELETE r
