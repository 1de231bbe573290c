// Every interaction and feedback weight of every user (``drop``).
MATCH (n)
WHERE n:Interaction OR n:FeedbackWeight
DETACH DELETE n
