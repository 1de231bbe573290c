// Test fixture only: every node of our labels, with its relationships.
MATCH (n)
WHERE n:User OR n:Memory OR n:Session OR n:Action OR n:Chunk OR n:Entity OR n:Injection
   OR n:Interaction OR n:FeedbackWeight OR n:SessionsGraphSchema
DETACH DELETE n
