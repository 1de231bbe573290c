"""``sessions-graph interactions`` and ``sessions-graph feedback``: a user's
Interactions (the short-term cache of their sessions' exchanges) and rating
one of them, which moves the feedback weights of what it was given."""

from __future__ import annotations

from sessions_graph.cli.common import echo, emit_json, fail, open_graph
from sessions_graph.cli.params import Argument, Option

_USER = Option(None, "--user", "-u", help="User id (default: the configured user_id).")


def interactions(
    session: str = Option(None, "--session", "-s", help="Only this session's."),
    limit: int = Option(20, "--limit", "-n", help="At most N (1-1000)."),
    user: str = _USER,
    as_json: bool = Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The user's interactions, newest first: question, answer, rating, and
    how many of the items given with it the answer used."""
    with open_graph() as graph:
        found = graph.interactions(user or graph.settings.user_id, session, limit=limit, plain=True)
    if as_json:
        emit_json(found)
        return
    for i in found:
        used = sum(bool(item["used"]) for item in i["context"])
        rating = f"  rated {i['feedback']}" if i["feedback"] is not None else ""
        echo(
            f"{i['interaction_id']}  {i['created_at'][:19]}Z  session {i['session_id']}"
            f"  {i['source']}  used {used}/{len(i['context'])}{rating}"
        )
        echo(f"    asked:    {_line(i['question'])}")
        if i["answer"] is not None:
            echo(f"    answered: {_line(i['answer'])}")


def feedback(
    target: str = Argument(
        ..., metavar="INTERACTION_ID|last", help="The interaction rated, or 'last' (the newest)."
    ),
    score: str = Argument(..., metavar="SCORE", help="1 (wrong) to 5 (helped)."),
    user: str = _USER,
) -> None:
    """Rate an interaction's answer from 1 (wrong) to 5 (helped): the weights
    of what it was given move, and recall ranks them accordingly."""
    try:
        value = int(score)
    except ValueError:
        raise fail(f"SCORE must be an integer from 1 to 5, not {score!r}") from None
    with open_graph() as graph:
        user_id = user or graph.settings.user_id
        if target == "last":
            newest = graph.interactions(user_id, limit=1, plain=True)
            if not newest:
                raise fail(f"no interaction of user {user_id!r} to rate")
            target = newest[0]["interaction_id"]
        rated = graph.feedback(user_id, target, value)
    echo(f"rated {rated.interaction_id} {value}: {len(rated.context)} items' weights moved")


def _line(text: str, size: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"
