// One entity a question names, through the user's own units only: one row
// per (mention, unit) with the mention's own type and description (never the
// entity node's merged ones, which other users' chunks may have shaped). At
// most $limit rows and no ORDER BY, so that the expansion stops there: an
// entity mentioned tens of thousands of times costs what a rare one does.
MATCH (e:Entity)
WHERE id(e) = $id
MATCH (e)-[m:MENTIONED_IN]->(c:Chunk)<-[:HAS_CHUNK]-(unit)
OPTIONAL MATCH (s:Session)-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)
WITH e, m, c, unit, s
WHERE ((s IS NOT NULL AND s.user_id = $user_id)
       OR (s IS NULL AND unit:Memory AND unit.user_id = $user_id))
  AND (unit:Memory OR coalesce(unit.origin, 'conversation') = 'conversation')
RETURN e.entity_id AS name, m.entity_type AS entity_type, m.description AS description,
       CASE WHEN unit:Action THEN 'action' ELSE 'memory' END AS unit_kind,
       CASE WHEN unit:Action THEN unit.action_id ELSE unit.memory_id END AS unit_id,
       s.session_id AS session_id,
       CASE WHEN unit:Action THEN coalesce(unit.timestamp, s.started_at)
            ELSE unit.created_at END AS timestamp,
       s.project_key AS project_key, s.cwd AS cwd, c.hash AS chunk_hash
LIMIT $limit
