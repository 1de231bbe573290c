// Mark the chunk extracted (the entry $mark: the workspace for the LLM,
// 'extractor:workspace' for another extractor) and end the claim on it in
// $workspace.
MATCH (c:Chunk {hash: $hash})
SET c.extracted_in = CASE WHEN $mark IN coalesce(c.extracted_in, [])
                          THEN c.extracted_in
                          ELSE coalesce(c.extracted_in, []) + [$mark] END,
    c.claims = reduce(acc = [], k IN coalesce(c.claims, []) |
      CASE WHEN k.workspace = $workspace THEN acc ELSE acc + [k] END)
RETURN count(c) AS found
