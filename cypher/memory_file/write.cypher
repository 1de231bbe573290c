// Replace a file's content if nobody wrote it since $expected_version; the
// kept versions are computed by the engine from the ones it read.
MATCH (m:MemoryFile {file_key: $file_key})
WHERE m.version = $expected_version
SET m.content = $content, m.updated_at = $updated_at, m.version = $expected_version + 1,
    m.versions = $versions
RETURN m.session_id AS session_id
