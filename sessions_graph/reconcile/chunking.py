"""From a unit's raw text to hashed chunks, deterministically and offline.

Dedup works only if the same text always yields the same chunks and hashes,
on every machine and in every run: so normalisation is fixed (Unicode NFC,
whitespace collapsed), the tokenizer is ours (no downloaded vocabulary, unlike
tiktoken, which fetches its tables at run time), and a chunk's hash is the
SHA-256 of its normalised text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from sessions_graph.redact import redact

#: Longest text taken from one unit (an Action or a Memory), in characters,
#: after redaction. Tool output beyond this is mostly logs; cost stays bounded.
MAX_RECONCILABLE_CHARS = 8000
#: How far past that cut redaction still reads: a secret that straddles the
#: cut is seen whole (tokens are far shorter; a private key block is
#: recognised by its BEGIN line alone), while redaction's cost stays bounded
#: by this, not by the unit's length (up to 200,000 characters).
REDACTION_MARGIN_CHARS = 4096
#: Chunk size and overlap in ``OfflineTokenizer`` tokens (LightRAG's defaults):
#: a unit of <= 8000 characters makes one or two chunks.
DEFAULT_CHUNK_TOKENS = 1200
DEFAULT_CHUNK_OVERLAP = 100

# A GPT-2-like pre-tokenisation: a word (with its leading space, cut at 16
# characters as BPE would cut a long identifier), up to 3 digits, a run of
# punctuation, or whitespace. Every character belongs to exactly one token.
_TOKEN = re.compile(r" ?[^\W\d]{1,16}| ?\d{1,3}| ?[^\s\w]{1,4}|\s+(?!\S)|\s+")
_SPACES = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class OfflineTokenizer:
    """A deterministic tokenizer implementing LightRAG's ``TokenizerInterface``.

    Token boundaries follow the pattern above, so counts land close to
    tiktoken's for English and code (about one token per word or symbol run).
    A token id is the token's UTF-8 bytes read as one integer (with a leading
    1 byte to keep leading zero bytes), so ``decode`` is exact and the object
    is stateless: safe to share across LightRAG's worker threads and to
    deep-copy, as LightRAG's ``Tokenizer`` contract requires.
    """

    def tokens(self, text: str) -> list[str]:
        return _TOKEN.findall(text)

    def encode(self, content: str) -> list[int]:
        return [int.from_bytes(b"\x01" + t.encode("utf-8"), "big") for t in self.tokens(content)]

    def decode(self, tokens: list[int]) -> str:
        parts = []
        for token in tokens:
            raw = token.to_bytes((token.bit_length() + 7) // 8, "big")
            parts.append(raw[1:].decode("utf-8"))
        return "".join(parts)


@dataclass(frozen=True)
class Chunk:
    """One piece of a unit: the text that is stored, hashed and extracted."""

    hash: str
    text: str


@dataclass(frozen=True)
class PreparedUnit:
    """A unit ready to store: ``content_hash`` says whether it needs re-chunking."""

    content_hash: str
    chunks: list[Chunk]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(text: str) -> str:
    """NFC, spaces and tabs collapsed, at most one blank line, trimmed lines."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


def chunk_text(
    text: str,
    tokenizer: OfflineTokenizer,
    size: int = DEFAULT_CHUNK_TOKENS,
    overlap: int = DEFAULT_CHUNK_OVERLAP,
) -> list[Chunk]:
    """Cut normalised ``text`` into windows of ``size`` tokens overlapping by
    ``overlap``; identical windows (repeated log lines) are kept once."""
    if not 0 <= overlap < size:  # so size > 0 too
        raise ValueError("chunk size must be > 0 and 0 <= overlap < size")
    tokens = tokenizer.tokens(text)
    chunks: dict[str, Chunk] = {}
    start = 0
    while start < len(tokens):
        piece = "".join(tokens[start : start + size]).strip()
        if piece:
            digest = sha256(piece)
            chunks.setdefault(digest, Chunk(digest, piece))
        if start + size >= len(tokens):
            break
        start += size - overlap
    return list(chunks.values())


def prepare_unit(
    raw: str,
    tokenizer: OfflineTokenizer,
    size: int = DEFAULT_CHUNK_TOKENS,
    overlap: int = DEFAULT_CHUNK_OVERLAP,
) -> PreparedUnit:
    """Normalise, redact, truncate and chunk one unit's text.

    Redaction reads ``REDACTION_MARGIN_CHARS`` past the cut, so that the cut
    can never leave half a secret that no rule recognises, and no more, so
    that its work is bounded per unit. ``content_hash`` covers the chunking
    parameters too: changing them re-chunks units on their next run.
    """
    text = normalise(raw or "")[: MAX_RECONCILABLE_CHARS + REDACTION_MARGIN_CHARS]
    text = redact(text)[:MAX_RECONCILABLE_CHARS].strip()
    content_hash = sha256(f"chunks:v1:{size}:{overlap}\n{text}")
    return PreparedUnit(content_hash, chunk_text(text, tokenizer, size, overlap) if text else [])
