// What older builds created and setup drops where the server lists it
// (schema.setup_retired): actions were unique by action_id alone, which let
// one user's ids block another's (schema version 12 keys them by
// action_key, the user's id and the action's).
DROP CONSTRAINT ON (n:Action) ASSERT n.action_id IS UNIQUE;
DROP INDEX ON :Action(action_id);
