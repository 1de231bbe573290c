"""``python -m sessions_graph.hooks.drain``: replay the whole spool, detached.

A hook spends a small fixed budget on the spool (``runner.HOOK_BUDGET_SECONDS``);
when more is waiting (the first hook after an outage may find thousands of
events), or the store's schema is older than this build's (migrating is
for minutes, not a hook's second), it queues its own event behind them and
starts this process, which opens the store (migrating it), replays
everything in order under the spool's replay lock and exits. One drain runs
at a time (``spool.DRAIN_LOCK``, held throughout); if another process is
replaying already, this one exits at once: that one takes the files too. If
this one dies, the next hook call or ``reconcile`` run carries on where it
stopped.
"""

from __future__ import annotations

import warnings

from sessions_graph.hooks.log import log_line


def main() -> int:
    warnings.simplefilter("ignore")  # as in the hook: our log line is all
    from sessions_graph.graph import SessionsGraph
    from sessions_graph.hooks.replay import replay_spool
    from sessions_graph.hooks.spool import DRAIN_LOCK, replay_lock
    from sessions_graph.settings import load_settings

    settings = load_settings()
    with replay_lock(settings, DRAIN_LOCK) as held:
        if not held:
            return 0  # another drain runs: it takes the files too
        try:
            # Opening migrates an older store (the hooks leave that to us).
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
