"""Normalisation, the offline tokenizer, chunking and the LightRAG extraction driver."""

from __future__ import annotations

import asyncio
import copy

import pytest
from reconcile_scripted import DELIM, DONE, ScriptedLLM, extraction_output

from sessions_graph.reconcile.chunking import (
    MAX_RECONCILABLE_CHARS,
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
    assert seen and max(seen) <= MAX_RECONCILABLE_CHARS + chunking.REDACTION_MARGIN_CHARS
    assert "ghp_" not in text and "abcdefghij" not in text


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
