"""``sessions-graph`` entry point.

``sessions-graph hook`` runs inside agent hook runtimes on every event, and
``sessions-graph [--db PATH] recall`` is called by scripts and agents between
turns, so both are dispatched here before the rest of the CLI (its table and
parser, let alone typer) loads.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"]:
        from sessions_graph.hooks.runner import main as hook_main

        # Everything is stored and logged by now. Skipping the interpreter's
        # teardown saves the hook a few milliseconds, and leaves the embedded
        # store's WAL for the next hook process (see SQLiteEngine.close).
        _exit_now(hook_main(sys.argv[2:]))
    db, words = _global_db(sys.argv[1:])
    if words[:1] == ["recall"]:
        # One question, then os._exit: what the cyclic collector would
        # free, the exit frees. Its passes over the objects the imports
        # make (all kept) cost a recall process about 3% of its CPU.
        gc.disable()
        from sessions_graph.cli.recall import main as recall_main

        # The answer is printed and the store closed by now: the teardown
        # (freeing every module) would only keep the caller waiting.
        _exit_now(recall_main(words[1:], db=db))
    from sessions_graph.cli.main import run

    run()


def _global_db(argv: list[str]) -> tuple[str | None, list[str]]:
    """The global ``--db PATH`` (``--db=PATH``) options in front, the last of
    them winning as in ``cli.parse``, and the words after them: ``--db PATH
    recall`` takes the same short way as ``recall``."""
    db, words = None, argv
    while words:
        if words[0] == "--db" and len(words) > 1:
            db, words = words[1], words[2:]
        elif words[0].startswith("--db="):
            db, words = words[0].removeprefix("--db="), words[1:]
        else:
            break
    return db, words


def _exit_now(code: int) -> None:
    """Flush what was written and end the process without the interpreter's teardown."""
    for stream in (sys.stdout, sys.stderr):
        # None when the runtime started us with that descriptor closed.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
