// A new Memory under its User (MERGEd). user_key is what the text index
// filters users by (see MemgraphEngine.search_memories). Every value is a
// flat $parameter: Memgraph documents parameters as literals, not property
// lookups on a parameter map inside MERGE.
MERGE (u:User {user_id: $user_id})
ON CREATE SET u.created_at = $created_at
CREATE (m:Memory {
  memory_id: $memory_id,
  user_id: $user_id,
  user_key: $user_key,
  content: $content,
  session_id: $session_id,
  project_key: $project_key,
  created_at: $created_at,
  updated_at: $updated_at
})
CREATE (u)-[:HAS_MEMORY]->(m)
