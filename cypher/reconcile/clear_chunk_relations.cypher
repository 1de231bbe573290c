// Take a chunk's hash off the relations it asserted between these entities
// (every relation's ends are mentioned by the chunks asserting it), and
// delete relations no chunk asserts any more. Lists are filtered with
// reduce, which Memgraph documents, rather than a list comprehension.
MATCH (a:Entity)-[r:DIRECTED]-(:Entity)
WHERE id(a) IN $entity_ids AND $hash IN coalesce(r.chunk_hashes, [])
WITH DISTINCT r
SET r.chunk_hashes = reduce(acc = [], h IN r.chunk_hashes |
      CASE WHEN h = $hash THEN acc ELSE acc + [h] END)
WITH r
SET r.source_id = reduce(acc = '', h IN r.chunk_hashes |
      CASE WHEN acc = '' THEN h ELSE acc + $sep + h END)
WITH r
WHERE size(r.chunk_hashes) = 0
DELETE r
