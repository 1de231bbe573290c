// Mark the chunk extracted into $workspace and end the claim on it there.
MATCH (c:Chunk {hash: $hash})
SET c.extracted_in = CASE WHEN $workspace IN coalesce(c.extracted_in, [])
                          THEN c.extracted_in
                          ELSE coalesce(c.extracted_in, []) + [$workspace] END,
    c.claims = reduce(acc = [], k IN coalesce(c.claims, []) |
      CASE WHEN k.workspace = $workspace THEN acc ELSE acc + [k] END)
RETURN count(c) AS found
