MATCH (v:SessionsGraphSchema {key: 'schema'})
RETURN v.version AS version
