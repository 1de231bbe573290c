// The schema version lives on one marker node, so status() can report it.
MERGE (v:SessionsGraphSchema {key: 'schema'})
SET v.version = $version
