"""``python -m sessions_graph.hooks.drain``: replay the whole spool, detached.

A hook spends a small fixed budget on the spool (``runner.HOOK_BUDGET_SECONDS``);
when more is waiting (the first hook after an outage may find thousands of
events), it queues its own event behind them and starts this process, which
replays everything in order under the spool's replay lock and exits. If
another process is replaying already, this one exits at once: that one takes
the files too. If this one dies, the next hook call or ``reconcile`` run
carries on where it stopped.
"""

from __future__ import annotations

import warnings

from sessions_graph.hooks.log import log_line


def main() -> int:
    warnings.simplefilter("ignore")  # as in the hook: our log line is all
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.hooks.replay import replay_spool
    from sessions_graph.settings import load_settings

    settings = load_settings()
    try:
        with SessionsGraph(settings=settings) as graph:
            replayed = replay_spool(graph, settings)
    except Exception as exc:  # the store went down again: the files wait, in order
        message = f"background replay stopped: {type(exc).__name__}: {exc}"
        log_line(settings.log_path, "WARN", message)
        return 0
    log_line(settings.log_path, "INFO", f"background replay: {replayed} spooled events applied")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
