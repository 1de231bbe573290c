// This user's sessions whose chunks mention the name, in any workspace;
// newest first by end (else start) time, as the embedded engine orders them.
MATCH (e:Entity)
WHERE e.name_key = $name_key
MATCH (e)-[:MENTIONED_IN]->(:Chunk)<-[:HAS_CHUNK]-(unit)
MATCH (s:Session)-[:HAS_ACTION|PRODUCED_MEMORY]->(unit)
WHERE s.user_id = $user_id
WITH DISTINCT s
ORDER BY coalesce(s.ended_at, s.started_at) DESC, s.session_id DESC
RETURN s.session_id AS session_id, s.user_id AS user_id, s.started_at AS started_at,
       s.ended_at AS ended_at, s.cwd AS cwd, s.project_key AS project_key,
       s.reconciliation_status AS reconciliation_status, s.reconciled_at AS reconciled_at,
       s.reconciliation_error AS reconciliation_error, s.last_summary AS last_summary,
       s.content_version AS content_version, s.action_count AS action_count
