"""``sessions-graph setup | status``: the store itself, and whether capture works."""

from __future__ import annotations

from typing import Any

from sessions_graph.cli.common import cli_settings, echo, emit_json, missing_store, open_graph
from sessions_graph.cli.params import Option


def setup() -> None:
    """Create the schema (idempotent)."""
    with open_graph() as graph:
        graph.setup()
        info = graph.status()
    echo(f"ready: {info['engine']} at {info['location']} (schema {info['schema_version']})")
    counts = info.get("counts") or {}
    derived, client = counts.get("derived_actions", 0), counts.get("client_actions", 0)
    if derived or client:
        echo(
            f"kept out of recall, injection and extraction: {derived} derived actions"
            f" (our own output), {client} client-context actions"
        )


def status(
    user: str = Option(
        None, "--user", "-u", help="Whose counts (default: the configured user_id)."
    ),
    as_json: bool = Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Which engine and where, the schema version, and the user's counts."""
    settings = cli_settings()
    user_id = user or settings.user_id
    path = missing_store(settings)
    if path:
        info: dict[str, Any] = {
            "engine": "embedded",
            "location": path,
            "exists": False,
            "schema_version": 0,
            "user_id": user_id,
            "counts": {},
        }
    else:
        with open_graph(settings=settings) as graph:
            info = graph.status(user_id=user_id)
            info["health"] = _health(graph, settings, user_id)
    if path:
        info["health"] = _health(None, settings, user_id)
    codex_hooks = None
    codex = next(c for c in info["health"]["clients"] if c["client"] == "codex")
    if any(h["scope"] == "user" for h in codex["hooks"]):
        # Only then: the hooks command's module (and its trust check) is the
        # heaviest import ``status`` would otherwise make, and the health
        # above has already read the file that says whether ours are there.
        from sessions_graph.cli.hooks import codex_hooks_status

        codex_hooks = codex_hooks_status()
    if codex_hooks:
        info["codex_hooks"] = codex_hooks
    if as_json:
        emit_json(info)
        return
    echo(f"engine:         {info['engine']}")
    echo(f"location:       {info['location']}")
    if codex_hooks:
        echo(f"codex hooks:    {codex_hooks}")
    if path:
        echo(f"no database at {path}: nothing recorded yet")
        echo("(the first write, or `sessions-graph setup`, creates it)")
    else:
        echo(f"schema version: {info['schema_version']}")
        echo(f"user_id:        {info['user_id']}")
        for name, count in info.get("counts", {}).items():
            echo(f"{name + ':':<15} {count}")
        for row in info.get("interactions", []):
            share = "-" if row["used_share"] is None else f"{row['used_share']:.0%}"
            echo(
                f"interactions:   session {row['session_id']}: {row['interactions']} asked,"
                f" {row['answered']} answered, {row['rated']} rated, used {share}"
                f" of {row['items']} items given"
            )
        injected = info.get("injected")
        if injected:  # today's total is a line of the health below
            echo(
                f"per session:    median {injected['session_median']:g}, max"
                f" {injected['session_max']} tokens over {injected['sessions']} sessions"
            )
    from sessions_graph.cli.sessions import health_lines

    for line in health_lines(info["health"]):
        echo(line)


def _health(graph: Any, settings: Any, user_id: str) -> dict[str, Any]:
    """Whether capture works (see ``ui.views.health``)."""
    from sessions_graph.ui.views import health

    return health(graph, settings, user_id)
