"""``sessions-graph`` entry point.

``sessions-graph hook`` runs inside agent hook runtimes on every event, and
``sessions-graph recall`` is called by scripts and agents between turns, so
both are dispatched here before the typer application (and its imports) loads.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"]:
        from sessions_graph.hooks.runner import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if sys.argv[1:2] == ["recall"]:
        from sessions_graph.recall.command import main as recall_main

        sys.exit(recall_main(sys.argv[2:]))
    from sessions_graph.cli import run

    run()


if __name__ == "__main__":
    main()
