// Every interaction whose time is up (the weights it taught stay).
MATCH (i:Interaction)
WHERE i.expires_at IS NOT NULL AND i.expires_at <= $now
DETACH DELETE i
RETURN count(*) AS deleted
