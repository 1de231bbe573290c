MATCH (s:Session {session_id: $session_id})
WHERE s.import_source = $source
RETURN s.import_offset AS import_offset
