MATCH (v:SessionsGraphSchema) DELETE v
