// Every index the server holds (label, label+property, text, ...), for
// setup's idempotence check. Auto-commit only.
SHOW INDEX INFO
