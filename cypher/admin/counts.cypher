// Node counts per label of ours; label scans use the label indexes.
OPTIONAL MATCH (u:User) WITH count(u) AS users
OPTIONAL MATCH (s:Session) WITH users, count(s) AS sessions
OPTIONAL MATCH (a:Action) WITH users, sessions, count(a) AS actions
OPTIONAL MATCH (m:Memory) WITH users, sessions, actions, count(m) AS memories
OPTIONAL MATCH (c:Chunk) WITH users, sessions, actions, memories, count(c) AS chunks
OPTIONAL MATCH (e:Entity)
RETURN users, sessions, actions, memories, chunks, count(e) AS entities
