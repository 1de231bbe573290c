// The session's import cursor: its transcript source, the offset read up to,
// and the fingerprint of that prefix (a rewritten file is read again).
MATCH (s:Session {session_id: $session_id})
WHERE s.import_source IS NOT NULL
RETURN s.import_source AS import_source, s.import_offset AS import_offset,
       s.import_fingerprint AS fingerprint
