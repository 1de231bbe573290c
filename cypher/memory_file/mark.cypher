// Make a Memory just saved a memory file, at version 1 with its first version.
MATCH (m:Memory {memory_id: $memory_id})
SET m:MemoryFile, m.file_key = $file_key, m.path = $path, m.version = 1,
    m.versions = $versions
