"""``sessions-graph`` entry point.

``sessions-graph hook`` runs inside agent hook runtimes on every event, and
``sessions-graph recall`` is called by scripts and agents between turns, so
both are dispatched here before the typer application (and its imports) loads.
"""

from __future__ import annotations

import contextlib
import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"]:
        from sessions_graph.hooks.runner import main as hook_main

        # Everything is stored and logged by now. Skipping the interpreter's
        # teardown saves the hook a few milliseconds, and leaves the embedded
        # store's WAL for the next hook process (see SQLiteEngine.close).
        _exit_now(hook_main(sys.argv[2:]))
    if sys.argv[1:2] == ["recall"]:
        from sessions_graph.cli.recall import main as recall_main

        # The answer is printed and the store closed by now: the teardown
        # (freeing every module) would only keep the caller waiting.
        _exit_now(recall_main(sys.argv[2:]))
    from sessions_graph.cli.main import run

    run()


def _exit_now(code: int) -> None:
    """Flush what was written and end the process without the interpreter's teardown."""
    for stream in (sys.stdout, sys.stderr):
        # None when the runtime started us with that descriptor closed.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
