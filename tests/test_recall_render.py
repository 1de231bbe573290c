"""What an agent reads of a recall: snippets cut around the match, the
matched turn marked among its neighbours, and the whole answer within its
token budget, for English and for scripts written without spaces."""

from __future__ import annotations

import pytest

from sessions_graph.errors import MemoryValidationError
from sessions_graph.recall.render import (
    REDACTION_MARGIN,
    _heading,
    clip,
    estimate_tokens,
    render,
    snippet,
    turn_text,
)


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


#: A text of 2,000 characters with one word to find, and where it stands.
_LONG = "a" * 1000 + " orion " + "b" * 993
_AT = _LONG.index("orion")


def test_a_snippet_shows_a_third_of_its_length_before_the_match() -> None:
    """What led to the match is shown, and most of the room goes to what follows."""
    shown = clip(_LONG, 90, ["orion"])
    assert shown == "…" + _LONG[_AT - 30 : _AT + 60] + "…"
    # The same through the redacting snippet, whichever side of the cut the text is on.
    assert snippet(_LONG, 90, ["orion"]) == shown
    longer = "c" * 3000 + _LONG + "d" * 3000
    assert snippet(longer, 90, ["orion"]) == shown


def test_a_snippet_near_either_end_of_the_text_is_full_length() -> None:
    start = "orion " + "b" * 500
    assert clip(start, 90, ["orion"]) == start[:90] + "…"
    end = "a" * 500 + " orion"
    assert clip(end, 90, ["orion"]) == "…" + end[-90:]
    for text in ("orion " + "b" * 3000, "(orion) " + "b" * 3000, "a" * 3000 + " orion"):
        assert snippet(text, 90, ["orion"]) == clip(text, 90, ["orion"])


def test_the_earliest_match_in_the_text_decides_even_at_its_first_character() -> None:
    text = "orion " + "x" * 600 + " lyra " + "y" * 600
    assert clip(text, 90, ["lyra", "orion"]) == text[:90] + "…"


def test_a_text_of_exactly_the_snippet_length_is_shown_whole() -> None:
    text = "w" * 89 + "z"
    assert clip(text, 90) == text
    assert clip(text + "!", 90) == text + "…"


def _jwt() -> str:
    """A signed token over a thousand characters long, like one carrying scopes."""
    import base64
    import json

    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"sub": "alice", "scope": [f"read:{n:04d}" for n in range(60)]}
    return part({"alg": "HS256", "typ": "JWT"}) + "." + part(claims) + "." + "Qx9v" * 11


def test_a_token_longer_than_the_redaction_margin_shows_none_of_it() -> None:
    """The cut before the snippet fell inside the token, past the first
    characters the redactor knows it by, and the token's end showed."""
    token = _jwt()
    assert len(token) > 1000
    for text in (
        "filler words " * 300 + f'curl -H "Authorization: Bearer {token}" https://api/bastion\n',
        '{"log":"' + "x" * 3000 + f'","token":"{token}","host":"bastion"}}' + "y" * 3000,
    ):
        shown = snippet(text, 240, ["bastion"])
        assert "bastion" in shown and "[REDACTED:jwt]" in shown
        assert not [
            token[i : i + 12] for i in range(0, len(token) - 12, 6) if token[i : i + 12] in shown
        ]


def test_a_text_up_to_the_snippet_and_both_margins_is_redacted_whole() -> None:
    """Only a longer text is cut before redaction: up to ``size`` plus the
    margin on each side, the redactor sees it all, here a quoted password
    longer than the margin, with the snippet in its last words."""
    secret = " ".join(f"w{i:03d}!" for i in range(90))
    said = f'db_password = "{secret}" zircon ' + "z" * 10
    size = 90
    text = "a" * (size + 2 * REDACTION_MARGIN - len(said)) + said
    shown = snippet(text, size, ["zircon"])
    assert '"[REDACTED:password]" zircon' in shown and "w08" not in shown


def test_nothing_found_stays_within_the_budget_too() -> None:
    for budget in (1, 3, 10):
        shown = render([], budget, "where did we put the deployment runbook for orion?")
        assert shown and estimate_tokens(shown) <= budget
    assert render([], 10, "where did we put the runbook?").startswith("Recalled for")
    assert render([], 100, "x") == "Recalled for 'x': nothing found."


def test_a_hit_too_long_for_the_budget_still_shows_its_heading_as_the_first() -> None:
    shown = render([_hit(1, "a long answer " * 200)], 20, "q")
    assert estimate_tokens(shown) <= 20
    assert shown.splitlines()[1].startswith("[1] turn · 2026-11-29 10:00 · session s-1")


def test_each_hit_is_numbered_dated_and_attributed_in_its_heading() -> None:
    """The heading says which hit it is, when (to the minute), where, and
    in how many other sessions the same text was said."""
    hits = [
        {**_hit(1, "first answer"), "also_in": ["s-7"]},
        {"kind": "memory", "session_id": None, "timestamp": None, "text": "a saved note"},
        {**_hit(3, "third answer"), "also_in": ["s-8", "s-9"]},
    ]
    assert render(hits, 500, "q").splitlines() == [
        "Recalled for 'q':",
        "[1] turn · 2026-11-29 10:00 · session s-1 · also in 1 session",
        "    first answer",
        "[2] memory · undated · no session",
        "    a saved note",
        "[3] turn · 2026-11-29 10:00 · session s-3 · also in 2 sessions",
        "    third answer",
    ]
    assert render([_hit(1, "x")], 500).splitlines()[0] == "Recalled:"


def _entity(sessions: int, entity_type: str | None = "tool") -> dict[str, object]:
    return {
        "kind": "entity",
        "entity": "Redis",
        "entity_type": entity_type,
        "sessions": [f"s-{n}" for n in range(1, sessions + 1)],
        "timestamp": "2026-11-29T10:00:00Z",
        "text": "the cache",
    }


def test_an_entity_heading_names_five_sessions_and_counts_the_rest() -> None:
    def heading(hit: dict[str, object]) -> str:
        return render([hit], 500).splitlines()[1]

    five = "s-1, s-2, s-3, s-4, s-5"
    assert heading(_entity(5)) == (
        f"[1] entity Redis (tool) · last 2026-11-29 10:00 · mentioned in session {five}"
    )
    assert heading(_entity(6)).endswith(f"mentioned in session {five} and 1 more")
    assert heading(_entity(8)).endswith(f"mentioned in session {five} and 3 more")
    assert heading(_entity(1, None)) == (
        "[1] entity Redis · last 2026-11-29 10:00 · mentioned in session s-1"
    )


@pytest.mark.parametrize("budget", [0, -5, True, 1.5, "100", None])
def test_a_budget_that_is_not_a_positive_integer_is_refused(budget: object) -> None:
    with pytest.raises(MemoryValidationError, match="max_tokens"):
        render([_hit(1, "an answer")], budget)  # type: ignore[arg-type]


def test_the_default_budget_is_1500_tokens() -> None:
    hits = [_hit(n, "detail " * 2000) for n in range(1, 3)]
    shown = render(hits, query="q")
    assert shown == render(hits, 1500, "q") != render(hits, 1501, "q")
    assert estimate_tokens(shown) <= 1500


def test_a_cut_answer_fills_its_budget() -> None:
    """What does not fit is cut, never more: the answer comes within a
    token of its budget, whatever that is."""
    hits = [_hit(n, f"answer {n} " + "detail " * 400) for n in range(1, 4)]
    for budget in range(30, 600, 7):
        used = estimate_tokens(render(hits, budget, "q"))
        assert budget - 1 <= used <= budget, budget


def test_a_hit_is_cut_into_the_room_left_from_24_tokens_on() -> None:
    """A cut hit is worth showing only with some of its text: from 24 tokens
    of room on it is shown cut, below that the answer ends before it."""
    first = _hit(1, "the first answer")
    second = _hit(2, "the second answer " + "detail " * 200)
    title = "Recalled for 'q':"
    whole = estimate_tokens(title) + estimate_tokens(_heading(1, first) + "\n    " + "x" * 16) + 1
    at_24 = render([first, second], whole + 1 + 24, "q")
    assert "[2] turn" in at_24 and at_24.endswith("…")
    at_23 = render([first, second], whole + 1 + 23, "q")
    assert at_23 == render([first], 500, "q")  # the first hit whole, and no more


def test_when_no_hit_fits_whole_the_first_ones_heading_is_shown() -> None:
    hits = [_hit(1, "detail " * 200), _hit(2, "more")]
    shown = render(hits, 25, "q")
    assert shown == "Recalled for 'q':\n" + _heading(1, hits[0])


def test_a_cut_keeps_as_much_as_the_budget_holds() -> None:
    """'…' costs a token; the rest of the budget holds four ASCII characters a token."""
    query = "x" * 400
    whole = f"Recalled for {query!r}: nothing found."
    for budget in (2, 3, 10, 50):
        assert render([], budget, query) == whole[: 4 * (budget - 1)] + "…", budget
    short = "Recalled for 'x': nothing found."
    assert render([], estimate_tokens(short), "x") == short
    assert render([], estimate_tokens(short) - 1, "x") == short[:24] + "…"


def test_a_cut_one_character_in_is_marked_at_both_ends() -> None:
    """The match a third of the snippet from its start: here the cut drops
    only the text's first character, and says so."""
    text = "a" * 31 + "orion" + "b" * 200
    assert clip(text, 90, ["orion"]) == "…" + text[1:91] + "…"


def test_a_long_tool_name_is_cut_to_80_characters_in_the_turns_role() -> None:
    window = [
        {
            "action_id": "c1",
            "action_type": "tool_call",
            "tool_name": "T" * 81,
            "text": "ls",
        },
        {"action_id": "c2", "action_type": "tool_call", "tool_name": "U" * 80, "text": "pwd"},
    ]
    assert turn_text(window, {"c1"}, []).splitlines() == [
        ">> tool call (" + "T" * 80 + "…): ls",
        "   tool call (" + "U" * 80 + "): pwd",
    ]


def test_short_hits_that_fit_exactly_are_shown_whole() -> None:
    """Short as they are (too short to be worth cutting), hits that fit the
    budget exactly are all shown; a token less and the last one is left out."""
    hits = [_hit(1, "yes"), _hit(2, "no")]
    blocks = [_heading(n, h) + "\n    " + str(h["text"]) for n, h in enumerate(hits, start=1)]
    budget = estimate_tokens("Recalled for 'q':") + sum(estimate_tokens(b) + 1 for b in blocks)
    assert render(hits, budget, "q") == "\n".join(["Recalled for 'q':", *blocks])
    assert render(hits, budget - 1, "q") == "\n".join(["Recalled for 'q':", blocks[0]])


def test_a_matched_turn_shows_900_characters_and_its_neighbours_240() -> None:
    window = [
        {"action_id": "a1", "action_type": "user_message", "text": "b" * 2000},
        {"action_id": "a2", "action_type": "assistant_message", "text": "m" * 2000},
    ]
    asked, answer = turn_text(window, {"a2"}, []).splitlines()
    assert asked == "   user: " + "b" * 240 + "…"
    assert answer == ">> assistant: " + "m" * 900 + "…"
    whole = [{"action_id": "a1", "action_type": "user_message", "text": "b" * 240}]
    assert turn_text(whole, set(), []) == "   user: " + "b" * 240
