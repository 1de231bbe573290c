// Undo schema/setup, statement by statement; absent objects are tolerated.
DROP TEXT INDEX memory_content_index;
DROP INDEX ON :Entity(name_key);
DROP INDEX ON :Entity;
DROP INDEX ON :Chunk(hash);
DROP INDEX ON :Action(session_id);
DROP INDEX ON :Action(action_id);
DROP INDEX ON :Session(reconciliation_status);
DROP INDEX ON :Session(user_id);
DROP INDEX ON :Session(session_id);
DROP INDEX ON :Memory(created_at);
DROP INDEX ON :Memory(user_id);
DROP INDEX ON :Memory(memory_id);
DROP INDEX ON :User(user_id);
DROP CONSTRAINT ON (n:Chunk) ASSERT n.hash IS UNIQUE;
DROP CONSTRAINT ON (n:Action) ASSERT n.action_id IS UNIQUE;
DROP CONSTRAINT ON (n:Session) ASSERT n.session_id IS UNIQUE;
DROP CONSTRAINT ON (n:Memory) ASSERT n.memory_id IS UNIQUE;
DROP CONSTRAINT ON (n:User) ASSERT n.user_id IS UNIQUE;
