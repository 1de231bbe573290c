// A new Memory under its User (MERGEd). user_key is what the text index
// filters users by (see MemgraphEngine.search_memories).
MERGE (u:User {user_id: $memory.user_id})
ON CREATE SET u.created_at = $memory.created_at
CREATE (m:Memory {
  memory_id: $memory.memory_id,
  user_id: $memory.user_id,
  user_key: $user_key,
  content: $memory.content,
  session_id: $memory.session_id,
  created_at: $memory.created_at,
  updated_at: $memory.updated_at
})
CREATE (u)-[:HAS_MEMORY]->(m)
