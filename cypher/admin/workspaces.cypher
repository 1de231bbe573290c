// The entity workspaces our entities live in.
MATCH (e:Entity)
RETURN DISTINCT e.workspace AS workspace
