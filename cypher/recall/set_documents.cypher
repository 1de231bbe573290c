// Write turn documents (recall_body, recall_context, as their words' stems:
// recall_stemmed, schema version 15), what recall weighs them
// by (recall_speaker, recall_asks, recall_only_asks, recall_tells_time), their
// Told Time (recall_told_since / recall_told_until, null when none; recall_told
// marks it computed: schema version 16) and the
// user key that scopes them in action_recall_index; recall_cut_bytes is the
// size long words were cut to (index_text.words), so that setup finds
// documents cut otherwise. Run in the transaction that stores the actions: the
// index sees them when it commits.
UNWIND $documents AS d
MATCH (a:Action {action_key: d.action_key})
SET a.recall_body = d.body, a.recall_context = d.context, a.user_key = $user_key,
    a.recall_speaker = d.speaker, a.recall_asks = d.asks, a.recall_only_asks = d.only_asks,
    a.recall_tells_time = d.tells_time,
    a.recall_told_since = d.told_since, a.recall_told_until = d.told_until, a.recall_told = true,
    a.recall_cut_bytes = $cut_bytes, a.recall_stemmed = true
