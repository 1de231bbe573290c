"""Normalisation, the offline tokenizer, chunking and the LightRAG extraction driver."""

from __future__ import annotations

import asyncio
import copy

import pytest
from reconcile_scripted import DELIM, DONE, ScriptedLLM, extraction_output

from sessions_graph.reconcile.chunking import (
    MAX_RECONCILABLE_CHARS,
    Chunk,
    OfflineTokenizer,
    chunk_text,
    normalise,
    prepare_unit,
    sha256,
)
from sessions_graph.reconcile.extraction import ChunkExtractor, ExtractionError

TOKENIZER = OfflineTokenizer()


def test_normalise_is_nfc_and_collapses_whitespace() -> None:
    decomposed = "Cafe\u0301  au\tlait \r\n\n\n\n  next   line  "
    assert normalise(decomposed) == "Caf\u00e9 au lait\n\nnext line"


@pytest.mark.parametrize(
    "text",
    ["", "hello world", "  spaced\n\n\ttabs ", "naïve 日本語 emoji 🎉", "a" * 50, "x=1;y=[2]"],
)
def test_tokenizer_round_trips(text: str) -> None:
    tokens = TOKENIZER.encode(text)
    assert TOKENIZER.decode(tokens) == text
    assert "".join(TOKENIZER.tokens(text)) == text


def test_tokenizer_counts_like_a_bpe_and_survives_deepcopy() -> None:
    assert len(TOKENIZER.encode("The quick brown fox jumps over the lazy dog.")) == 10
    assert copy.deepcopy(TOKENIZER).encode("abc") == TOKENIZER.encode("abc")


def test_chunks_have_the_size_overlap_and_hash_asked() -> None:
    text = " ".join(f"word{i}" for i in range(1000))  # 2 tokens a word
    chunks = chunk_text(text, TOKENIZER, size=500, overlap=50)
    assert len(chunks) == 5
    assert all(c.hash == sha256(c.text) for c in chunks)
    assert chunks[0].text.startswith("word0 ") and chunks[1].text.startswith("word225 ")
    assert chunk_text(text, TOKENIZER, size=500, overlap=50) == chunks  # deterministic
    with pytest.raises(ValueError):
        chunk_text(text, TOKENIZER, size=10, overlap=10)


def test_prepare_unit_redacts_before_truncating() -> None:
    secret = "AKIAIOSFODNN7EXAMPLE"
    raw = "x " * 3995 + secret + " tail" * 100
    prepared = prepare_unit(raw, TOKENIZER)
    text = "".join(c.text for c in prepared.chunks)
    assert secret not in text and "AKIA" not in text
    assert sum(len(c.text) for c in prepared.chunks) <= MAX_RECONCILABLE_CHARS + 10
    assert 1 <= len(prepared.chunks) <= 3


def test_prepare_unit_redacts_a_bounded_prefix_that_covers_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redaction reads the cut plus a margin, not the whole 200,000 characters,
    and a secret straddling the cut still goes whole."""
    from sessions_graph.reconcile import chunking

    seen: list[int] = []
    real = chunking.redact

    def recording(text: str) -> str:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(chunking, "redact", recording)
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    head = "word " * ((MAX_RECONCILABLE_CHARS - 20) // 5)
    raw = head + "GITHUB_TOKEN=" + token + " " + "curl " * 40_000
    text = "".join(c.text for c in prepare_unit(raw, TOKENIZER).chunks)
    # The documented bound (docs/reconciliation.md): the first 8,000
    # characters plus a 4,096-character margin, no more and no less.
    assert seen == [8000 + 4096]
    assert "ghp_" not in text and "abcdefghij" not in text


def test_a_unit_keeps_exactly_its_first_8000_characters() -> None:
    """CONTEXT.md: each unit is cut to 8,000 characters (after redaction)."""
    raw = "".join(f"{i:05d} " for i in range(3000))  # 18,000 characters
    assert raw[7986:8001] == "01331 01332 013"  # the cut falls inside "01333"
    chunks = prepare_unit(raw, TOKENIZER).chunks
    assert chunks[0].text.startswith("00000 00001")
    assert chunks[-1].text.endswith(" 01331 01332 01")
    assert "01333" not in " ".join(c.text for c in chunks)


def test_default_chunks_are_1200_tokens_overlapping_by_100() -> None:
    """docs/reconciliation.md: windows of 1200 tokens overlapping by 100. Each
    word here is two tokens ("w" and its number), and the "." one more."""
    words = [f"w{i}" for i in range(600)]
    exactly = " ".join(words)
    assert len(TOKENIZER.tokens(exactly)) == 1200
    assert chunk_text(exactly, TOKENIZER) == [Chunk(sha256(exactly), exactly)]

    one_more = exactly + "."
    first, second = chunk_text(one_more, TOKENIZER)
    assert first.text == exactly and len(TOKENIZER.tokens(first.text)) == 1200
    # The second window starts 1100 tokens in (at word 550), so it holds the
    # last 100 tokens of the first and the "." after them.
    assert second.text == " ".join(words[550:]) + "."


def test_chunk_sizes_are_checked_at_their_bounds() -> None:
    text = "Alice met Bob"
    # One token per window and no overlap is the smallest valid chunking.
    assert [c.text for c in chunk_text(text, TOKENIZER, size=1, overlap=0)] == [
        "Alice",
        "met",
        "Bob",
    ]
    for size, overlap in [(0, 0), (-1, 0), (3, -1), (3, 3), (3, 4)]:
        with pytest.raises(ValueError, match="overlap"):
            chunk_text(text, TOKENIZER, size=size, overlap=overlap)


def test_prepare_unit_hash_follows_text_and_parameters() -> None:
    a = prepare_unit("Alice  uses Memgraph", TOKENIZER)
    assert a == prepare_unit("Alice uses Memgraph\n", TOKENIZER)
    assert a.content_hash != prepare_unit("Alice uses Neo4j", TOKENIZER).content_hash
    assert a.content_hash != prepare_unit("Alice uses Memgraph", TOKENIZER, 600, 50).content_hash
    assert prepare_unit("   ", TOKENIZER).chunks == []


def test_extractor_parses_lightrags_format() -> None:
    llm = ScriptedLLM()
    result = asyncio.run(
        ChunkExtractor(llm, concurrency=1).extract("h1", "Alice moved Orion to Memgraph.")
    )
    assert {e["name"] for e in result.entities} == {"Alice", "Orion", "Memgraph"}
    assert {(r["source"], r["target"]) for r in result.relations} == {
        ("Alice", "Orion"),
        ("Orion", "Memgraph"),
    }
    assert result.llm_calls == 1 and result.chars_sent > len("Alice moved Orion to Memgraph.")
    assert DELIM in llm.prompts[0]  # LightRAG's own prompt, with its delimiters


def test_extractor_adds_missing_relation_ends_and_gleans_when_asked() -> None:
    answer = f"relation{DELIM}Alice{DELIM}Vega{DELIM}knows{DELIM}Alice knows Vega.\n{DONE}"

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: object) -> str:
        return answer

    result = asyncio.run(
        ChunkExtractor(llm, concurrency=1, gleaning=1).extract("h", "Alice knows Vega.")
    )
    assert result.llm_calls == 2
    assert {e["name"] for e in result.entities} == {"Alice", "Vega"}


def test_extractor_reports_the_models_error_on_one_line() -> None:
    llm = ScriptedLLM(fail_on="Orion")
    with pytest.raises(ExtractionError, match="refuses text containing 'Orion'"):
        asyncio.run(ChunkExtractor(llm, concurrency=1).extract("abc", "Orion is down."))


def test_extractor_bounds_concurrency() -> None:
    active = peak = 0

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: object) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return extraction_output("Alice")

    async def many() -> None:
        extractor = ChunkExtractor(llm, concurrency=3)
        await asyncio.gather(*(extractor.extract(str(i), f"Text {i}") for i in range(10)))

    asyncio.run(many())
    assert peak == 3


def test_gleaning_counts_every_character_the_model_is_sent() -> None:
    """``chars_sent`` counts the prompt, the system prompt and the history of
    every request: gleaning's second request carries the first exchange."""
    sent: list[int] = []
    histories: list[list[dict]] = []

    async def llm(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list[dict] | None = None,
        **kwargs: object,
    ) -> str:
        history = history_messages or []
        histories.append(history)
        sent.append(
            len(prompt) + len(system_prompt or "") + sum(len(m["content"]) for m in history)
        )
        return extraction_output("Alice knows Vega.")

    extractor = ChunkExtractor(llm, concurrency=1, gleaning=1)
    result = asyncio.run(extractor.extract("h", "Alice knows Vega."))

    assert result.llm_calls == 2 and histories[0] == [] and len(histories[1]) == 2
    assert result.chars_sent == sum(sent)


def test_a_name_reported_twice_keeps_its_fullest_description() -> None:
    answer = "\n".join(
        [
            f"entity{DELIM}Vega{DELIM}star{DELIM}Vega.",
            f"entity{DELIM}Vega{DELIM}star{DELIM}Vega is the brightest star in Lyra.",
            f"entity{DELIM}Vega{DELIM}star{DELIM}Vega is a star.",
            DONE,
        ]
    )

    async def llm(prompt: str, system_prompt: str | None = None, **kwargs: object) -> str:
        return answer

    result = asyncio.run(ChunkExtractor(llm, concurrency=1).extract("h", "Vega shines."))
    assert result.entities == [
        {
            "name": "Vega",
            "entity_type": "star",
            "description": "Vega is the brightest star in Lyra.",
        }
    ]
