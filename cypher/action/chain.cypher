// Run after action/create, in the same transaction, so both ends exist.
UNWIND $links AS link
MATCH (p:Action {action_key: link.previous})
MATCH (n:Action {action_key: link.next})
CREATE (p)-[:FOLLOWED_BY]->(n)
