MATCH (c:Chunk {hash: $hash})
SET c.extracted_in = CASE WHEN $workspace IN coalesce(c.extracted_in, [])
                          THEN c.extracted_in
                          ELSE coalesce(c.extracted_in, []) + [$workspace] END
RETURN count(c) AS found
