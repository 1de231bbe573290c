// Test fixture only: the entity workspace label this engine wrote to.
MATCH (n:{workspace}) DETACH DELETE n
