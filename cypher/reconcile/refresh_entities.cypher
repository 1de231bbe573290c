// Recompute LightRAG's merged fields from the mentions that remain, and
// delete entities left with none (DETACH also drops their relations).
MATCH (e:Entity)
WHERE id(e) IN $entity_ids
OPTIONAL MATCH (e)-[m:MENTIONED_IN]->(c:Chunk)
WITH e, collect(c.hash) AS hashes, collect(m.description) AS descriptions
SET e.source_id = reduce(acc = '', h IN hashes |
      CASE WHEN acc = '' THEN h ELSE acc + $sep + h END),
    e.description = reduce(acc = '', d IN descriptions |
      CASE WHEN d IS NULL OR d = '' THEN acc WHEN acc = '' THEN d ELSE acc + $sep + d END)
WITH e, size(hashes) AS mentions
WHERE mentions = 0
DETACH DELETE e
RETURN count(*) AS deleted
