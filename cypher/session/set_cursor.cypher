MATCH (s:Session {session_id: $session_id})
SET s.import_source = $source, s.import_offset = $import_offset,
    s.import_fingerprint = $fingerprint
