"""The offline digest's own rules: sentences, and the turns it quotes."""

from __future__ import annotations

from sessions_graph.digest import build


def _turns(*texts: str) -> list[dict[str, object]]:
    kinds = ("user_message", "assistant_message")
    return [
        {"action_id": f"a-{i}", "action_type": kinds[i % 2], "text": t, "origin": "conversation"}
        for i, t in enumerate(texts)
    ]


def test_a_dot_inside_a_path_or_version_does_not_end_a_decision() -> None:
    body = build(
        _turns(
            "Which store should the orion cache use?",
            "Decision: the orion cache moves to SQLite (file under ~/.cache/orion, v3.45.1),"
            " not Redis. Done.",
        )
    )
    assert body["decisions"] == [
        "Decision: the orion cache moves to SQLite (file under ~/.cache/orion, v3.45.1), not Redis."
    ]


def test_the_digest_names_the_turns_it_quotes() -> None:
    body = build(
        _turns(
            "hello",
            "Hi.",
            "Pick a queue for the orion jobs",
            "We'll use RQ for the job queue. Next steps: add the worker.",
        )
    )
    assert body["goal"] == "Pick a queue for the orion jobs"
    # The goal's request, the deciding answer (also the one left open).
    assert body["sources"] == ["a-2", "a-3"]
