// Schema script: one statement per line, run one by one in auto-commit
// transactions (Memgraph refuses index DDL inside explicit transactions).
CREATE CONSTRAINT ON (n:User) ASSERT n.user_id IS UNIQUE;
CREATE CONSTRAINT ON (n:Memory) ASSERT n.memory_id IS UNIQUE;
CREATE CONSTRAINT ON (n:Session) ASSERT n.session_id IS UNIQUE;
CREATE CONSTRAINT ON (n:Action) ASSERT n.action_key IS UNIQUE;
CREATE CONSTRAINT ON (n:Chunk) ASSERT n.hash IS UNIQUE;
CREATE CONSTRAINT ON (n:MemoryFile) ASSERT n.file_key IS UNIQUE;
CREATE CONSTRAINT ON (n:Injection) ASSERT n.injection_id IS UNIQUE;
CREATE INDEX ON :User(user_id);
CREATE INDEX ON :Memory(memory_id);
CREATE INDEX ON :Memory(user_id);
CREATE INDEX ON :Memory(created_at);
CREATE INDEX ON :Memory(session_id);
CREATE INDEX ON :Session(session_id);
CREATE INDEX ON :Session(user_id);
CREATE INDEX ON :Session(reconciliation_status);
CREATE INDEX ON :Session(project_key);
CREATE INDEX ON :Action(action_key);
CREATE INDEX ON :Action(session_id);
CREATE INDEX ON :Chunk(hash);
CREATE INDEX ON :MemoryFile(file_key);
CREATE INDEX ON :MemoryFile(user_id);
CREATE INDEX ON :Injection(session_id);
CREATE INDEX ON :Injection(user_id);
CREATE INDEX ON :Entity;
CREATE INDEX ON :Entity(name_key);
CREATE TEXT INDEX memory_content_index ON :Memory(content, user_key);
CREATE TEXT INDEX action_recall_index ON :Action(recall_body, recall_context, user_key);
