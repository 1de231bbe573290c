// The user's memory file at a path. file_key is user_id + "|" + path ('|'
// never occurs in an id), unique under the MemoryFile label.
MATCH (m:MemoryFile {file_key: $file_key})
RETURN m.memory_id AS memory_id, m.user_id AS user_id, m.content AS content,
       m.session_id AS session_id, m.created_at AS created_at, m.updated_at AS updated_at,
       m.project_key AS project_key,
       m.path AS path, m.version AS version, m.versions AS versions
