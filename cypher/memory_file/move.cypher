// Put one file at its new path (a rename), with the version that records it.
MATCH (m:Memory {memory_id: $memory_id})
SET m.path = $path, m.file_key = $file_key, m.version = $version, m.versions = $versions,
    m.updated_at = $updated_at
