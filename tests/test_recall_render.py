"""What an agent reads of a recall: snippets cut around the match, the
matched turn marked among its neighbours, and the whole answer within its
token budget, for English and for scripts written without spaces."""

from __future__ import annotations

from sessions_graph.recall.render import _heading, estimate_tokens, render, snippet, turn_text


def test_a_long_turn_is_cut_around_the_words_that_matched() -> None:
    text = (
        "filler words here. " * 200 + "The orion cache uses SQLite in WAL mode. " + "more. " * 300
    )
    shown = snippet(text, 120, ["orion"])
    assert "orion cache uses SQLite" in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert len(shown) <= 120 + 2
    assert snippet("short and whole", 120, ["whole"]) == "short and whole"


def test_the_matched_turn_is_marked_among_its_neighbours() -> None:
    window = [
        {"action_id": "a1", "action_type": "user_message", "text": "which cache?"},
        {"action_id": "a2", "action_type": "assistant_message", "text": "SQLite in WAL mode"},
        {"action_id": "a3", "action_type": "user_message", "text": "thanks"},
    ]
    lines = turn_text(window, "a2", ["sqlite"]).splitlines()
    assert lines == [
        "   user: which cache?",
        ">> assistant: SQLite in WAL mode",
        "   user: thanks",
    ]


def test_text_without_spaces_costs_a_token_a_character() -> None:
    """CJK runs close to one token per character: counted as four to a token
    like English, a budget would let four times too much through."""
    assert estimate_tokens("東京の会議") == 5
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("東京 cache") == 2 + 2


def _hit(number: int, text: str) -> dict[str, object]:
    return {
        "kind": "turn",
        "session_id": f"s-{number}",
        "timestamp": "2026-11-29T10:00:00Z",
        "text": text,
    }


def test_hits_that_fit_exactly_are_shown_whole() -> None:
    hits = [_hit(1, "first answer " * 10), _hit(2, "second answer " * 10)]
    title = "Recalled for 'q':"
    blocks = [_heading(n, h) + "\n    " + str(h["text"]) for n, h in enumerate(hits, start=1)]
    budget = estimate_tokens(title) + sum(estimate_tokens(b) + 1 for b in blocks)
    shown = render(hits, budget, "q")
    assert "…" not in shown and shown.count("answer") == 20


def test_a_cut_answer_stays_within_its_budget() -> None:
    hits = [_hit(n, f"answer {n} " + "detail " * 200) for n in range(1, 4)]
    for budget in (30, 45, 60, 90, 200, 400):
        shown = render(hits, budget, "q")
        assert estimate_tokens(shown) <= budget, budget
        assert shown.endswith("…")
    cjk = [_hit(1, "東京の会議の記録" * 100)]
    for budget in (40, 80):
        assert estimate_tokens(render(cjk, budget, "q")) <= budget


def test_the_smallest_budget_still_answers_within_it() -> None:
    """One token: not even the first hit fits, and what is shown fits."""
    shown = render([_hit(1, "an answer")], 1, "q")
    assert shown and estimate_tokens(shown) <= 1


def _private_key(lines: int) -> tuple[str, list[str]]:
    """A PEM private key block of ``lines`` body lines (64 characters each, as
    PEM writes them), and those lines."""
    body = [
        f"{n:04d}" + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q" * 8
        for n in range(lines)
    ]
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(
        body
    ) + "\n-----END RSA PRIVATE KEY-----", body


def test_a_private_key_longer_than_the_redaction_margin_shows_none_of_its_lines() -> None:
    """A 2048-bit key block is some 1,700 characters, longer than the margin
    the redactor reads around a snippet: a match just after the key puts the
    cut inside the block, past its header, and the rest of the key showed."""
    key, body = _private_key(26)
    for before in ("", "intro words " * 200):
        text = before + key + "\nthe deploy bastion uses this key\n" + "filler words " * 300
        shown = snippet(text, 240, ["bastion"])
        assert "the deploy bastion uses this key" in shown
        assert "[REDACTED:private_key]" in shown
        assert not [line for line in body if line[:8] in shown or line[-8:] in shown]
        assert shown.startswith("…") == bool(before)
