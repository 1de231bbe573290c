MATCH (a:Entity)-[r:DIRECTED]-(:Entity)
WHERE id(a) IN $entity_ids AND $hash IN coalesce(r.chunk_hashes, [])
WITH DISTINCT r
SET r.chunk_hashes = [h IN r.chunk_hashes WHERE h <> $hash]
WITH r
SET r.source_id = reduce(acc = '', h IN r.chunk_hashes |
      CASE WHEN acc = '' THEN h ELSE acc + $sep + h END)
WITH r
WHERE size(r.chunk_hashes) = 0
DELETE r
