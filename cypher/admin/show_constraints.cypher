// Every constraint the server holds, for setup's idempotence check.
// Auto-commit only.
SHOW CONSTRAINT INFO
