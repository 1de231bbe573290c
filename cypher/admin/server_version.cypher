// The server's release ("3.6.2", "3.12.0+41~c0ffee"); the engine picks the
// form of version-dependent statements by it. Auto-commit only: Memgraph
// refuses it inside an explicit transaction.
SHOW VERSION
