// Entities nothing holds any more: no mention of ours, no part of anyone
// else's, no relationship. A plain DELETE, never DETACH: should a
// relationship have appeared, the transaction fails rather than take it.
UNWIND $ids AS wanted
MATCH (e:Entity)
WHERE id(e) = wanted
DELETE e
RETURN count(*) AS deleted
