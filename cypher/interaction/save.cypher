// A new Interaction of one user in one session (the short-term cache).
// Its context items are kept as one JSON string; no node is linked, since
// an application may recall with a session id it never recorded.
CREATE (i:Interaction {
  interaction_id: $interaction_id, user_id: $user_id, session_id: $session_id,
  source: $source, created_at: $created_at, expires_at: $expires_at,
  question: $question, context: $context, answer: $answer, feedback: $feedback,
  seq_from: $seq_from, items: $items, used: 0
})
