"""The element every injection is: its header, its footer, the budget rule
that fills it, and the quoting of each item (``sessions_graph.hooks.block``).

The budget is a ceiling in tokens of four characters: a block fills it to
the character and never passes it, each item quoted at the longest of its
quote lengths that still fits."""

from __future__ import annotations

import json

import pytest

from sessions_graph.hooks.block import NOTICE, TAG, Block, fit, quote, when

TOOL = "mcp__sessions-graph__recall"
FIRST = Block(TOOL, notice=True)
LATER = Block(TOOL, notice=False)


def _item(ids: list[str], text: str) -> tuple[list[str], object]:
    """An item whose line quotes ``text`` at the length fit asks for."""
    return ids, lambda n: f"- {quote(text, n)}"


def _quoted(line: str) -> str:
    return json.loads(line.removeprefix("- "))


def _lines(context: str) -> list[str]:
    return context.splitlines()


def _exact_budget(heading: str, lines: list[str], block: Block) -> int | None:
    """The budget in tokens that these lines fill to the last character, if any."""
    found = fit(
        10_000,
        [(heading, [([str(i)], lambda n, x=x: x) for i, x in enumerate(lines)])],
        kind="k",
        block=block,
    )
    assert found is not None
    size = len(found[0])
    return size // 4 if size % 4 == 0 else None


def test_a_block_says_the_notice_and_names_the_tool_only_when_asked() -> None:
    sections = [("Heading:", [_item(["turn:a"], "the deploy script")])]
    first, ids = fit(100, sections, kind="where-you-left-off", block=FIRST)
    assert ids == ["turn:a"]
    assert _lines(first) == [
        f'<{TAG} kind="where-you-left-off"> {NOTICE}',
        "Heading:",
        '- "the deploy script"',
        f"More: the `{TOOL}` tool searches every past session and memory of this user.",
        f"</{TAG}>",
    ]
    later, _ = fit(100, sections, kind="relevant-past", block=LATER)
    assert later == f'<{TAG} kind="relevant-past">\nHeading:\n- "the deploy script"\n</{TAG}>'


@pytest.mark.parametrize("block", [FIRST, LATER])
def test_a_block_that_fills_its_budget_exactly_fits_and_one_token_less_does_not(
    block: Block,
) -> None:
    """The whole element, header and footer included, counts against the
    budget: at the budget it fills to the character, the item whole; a token
    less and the item is quoted shorter."""
    text = "w" * 290  # one quote length (300) holds it whole
    for pad in range(4):  # a heading length at which the block fills whole tokens
        heading = "Past:" + "x" * pad
        budget = _exact_budget(heading, [f"- {quote(text, 300)}"], block)
        if budget:
            break
    assert budget
    found = fit(budget, [(heading, [_item(["turn:a"], text)])], kind="k", block=block)
    assert found is not None
    assert len(found[0]) == budget * 4
    assert _quoted(_lines(found[0])[2]) == text
    shorter = fit(budget - 1, [(heading, [_item(["turn:a"], text)])], kind="k", block=block)
    assert shorter is not None and len(shorter[0]) <= (budget - 1) * 4
    assert _quoted(_lines(shorter[0])[2]) == text[:149] + "…"


def test_each_later_item_costs_its_line_and_one_newline() -> None:
    """Two items filling the budget exactly are both shown; a token less and
    the second is shortened, never dropped while a shorter quote fits."""
    texts = ["alpha " * 40, "bravo " * 40]
    lines = [f"- {quote(t, 300)}" for t in texts]
    for pad in range(4):
        heading = "Items:" + "y" * pad
        budget = _exact_budget(heading, lines, LATER)
        if budget:
            break
    assert budget
    sections = [(heading, [_item(["turn:a"], texts[0]), _item(["turn:b"], texts[1])])]
    found = fit(budget, sections, kind="k", block=LATER)
    assert found is not None and len(found[0]) == budget * 4
    assert _lines(found[0])[2:4] == lines and found[1] == ["turn:a", "turn:b"]
    tighter = fit(budget - 1, sections, kind="k", block=LATER)
    assert tighter is not None and len(tighter[0]) <= (budget - 1) * 4
    assert _lines(tighter[0])[2] == lines[0]
    assert _quoted(_lines(tighter[0])[3]) == texts[1][:149].rstrip() + "…"


@pytest.mark.parametrize(("step", "shorter"), [(150, 80), (80, None)])
def test_an_item_takes_each_quote_length_in_turn_down_to_the_shortest(
    step: int, shorter: int | None
) -> None:
    """Quote lengths 300, 150, 80: at a budget that fits a quote of ``step``
    characters exactly, that is the quote; a token less, the next one (or
    nothing after the shortest)."""
    text = "z" * 400
    line = f"- {quote(text, step)}"
    assert len(_quoted(line)) == step
    for pad in range(4):
        heading = "H:" + "h" * pad
        budget = _exact_budget(heading, [line], LATER)
        if budget:
            break
    assert budget
    found = fit(budget, [(heading, [_item(["m"], text)])], kind="k", block=LATER)
    assert found is not None and _lines(found[0])[2] == line
    less = fit(budget - 1, [(heading, [_item(["m"], text)])], kind="k", block=LATER)
    if shorter is None:
        assert less is None
    else:
        assert less is not None and len(_quoted(_lines(less[0])[2])) == shorter


def test_a_section_without_a_fitting_item_has_no_heading_and_the_next_still_fills() -> None:
    big = "b" * 2000
    sections = [
        ("Sessions:", [_item(["turn:big"], big)]),
        ("Memories:", [_item(["memory:m1"], "use uv"), _item(["memory:m1"], "use uv again")]),
    ]
    # Room for the second section only: the first item's shortest quote needs more.
    context, ids = fit(30, sections, kind="k", block=LATER)
    assert "Sessions:" not in context
    assert _lines(context)[1:4] == ["Memories:", '- "use uv"', '- "use uv again"']
    assert ids == ["memory:m1"]  # each id once, in order


def test_nothing_fits_is_none() -> None:
    assert fit(0, [("H:", [_item(["a"], "text")])], kind="k", block=FIRST) is None
    assert fit(1000, [("H:", [])], kind="k", block=FIRST) is None


@pytest.mark.parametrize("limit", [10, 300])
def test_a_quote_is_cut_only_past_its_limit(limit: int) -> None:
    exact = "q" * limit
    assert quote(exact, limit) == json.dumps(exact)
    cut = json.loads(quote(exact + "r", limit))
    assert cut == "q" * (limit - 1) + "…" and len(cut) == limit


def test_a_quote_is_one_redacted_line_of_the_text_itself() -> None:
    assert quote("café\n  déjà\tvu") == '"café déjà vu"'
    assert quote(None) == '""' and quote("") == '""'
    secret = "sk-ant-api03-" + "a1B2c3D4" * 12
    assert secret not in quote(f"key {secret} here")
    assert "</" not in quote("</sessions-graph-memory> and </ SESSIONS-GRAPH-MEMORY>")


def test_a_quote_ending_in_spaces_before_the_cut_loses_them() -> None:
    assert json.loads(quote("abcd efgh", 6)) == "abcd…"


@pytest.mark.parametrize(
    ("stamp", "shown"),
    [
        ("2026-11-29T10:00:05.000000+00:00", "2026-11-29 10:00 UTC"),
        ("2026-11-29T10:07", "2026-11-29 10:07 UTC"),  # 16 characters: enough
        ("2026-11-29T10:0", "undated"),  # 15: not
        ("", "undated"),
        (None, "undated"),
    ],
)
def test_when_shows_a_timestamp_to_the_minute(stamp: str | None, shown: str) -> None:
    assert when(stamp) == shown
