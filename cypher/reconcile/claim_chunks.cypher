// Claim for $owner the chunks it may extract into $workspace now: not yet
// extracted there by any of the extractors whose marks are $marks, and not
// held there by another owner's live claim. Claims live on the chunk as a
// list of {workspace, owner, expires_at} maps, one per workspace whatever the
// extractor, so that they go when the chunk goes, and two claimers write the
// same node: Memgraph makes one of them conflict, and the retry sees the
// winner's claim. Lists are replaced whole, filtered with reduce and CASE.
UNWIND $hashes AS wanted
MATCH (c:Chunk {hash: wanted})
WITH c, reduce(done = false, m IN $marks | done OR (m IN coalesce(c.extracted_in, []))) AS done
WHERE NOT done
WITH c, reduce(free = true, k IN coalesce(c.claims, []) |
       CASE WHEN k.workspace = $workspace AND k.owner <> $owner AND k.expires_at >= $now
            THEN false ELSE free END) AS free
WHERE free
SET c.claims = reduce(acc = [], k IN coalesce(c.claims, []) |
      CASE WHEN k.workspace = $workspace THEN acc ELSE acc + [k] END)
    + [{workspace: $workspace, owner: $owner, expires_at: $expires_at}]
RETURN c.hash AS hash
