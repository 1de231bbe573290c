"""What a hit reads like, and a list of hits as text within a token budget.

Plain functions over plain dicts: the hook process renders recall results
for injection into the agent's context and must not import pydantic.
Every snippet passes through the secret redactor: Action text is stored as
the agent produced it, and a recalled turn is about to be shown again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

Record = dict[str, Any]

#: Characters shown of the matched turn, and of each neighbour around it.
TURN_CHARS = 900
NEIGHBOUR_CHARS = 240
MEMORY_CHARS = 900
ENTITY_CHARS = 600
#: How a turn is introduced, by action type.
_ROLES = {
    "user_message": "user",
    "assistant_message": "assistant",
    "tool_call": "tool call",
    "tool_result": "tool result",
    "system_message": "system",
}
_SPACE = re.compile(r"\s+")


def redacted(text: str) -> str:
    # Imported here: engines import this package's text rules on the hook's
    # write path, which never shows a snippet.
    from sessions_graph.redact import redact

    return redact(text)


def clip(text: str, size: int, around: Sequence[str] = ()) -> str:
    """``text`` on one line, at most ``size`` characters, centred on the first
    of the words ``around`` that it contains (the part that matched)."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= size:
        return text
    start = _start(text, size, around)
    piece = text[start : start + size]
    return ("…" if start > 0 else "") + piece + ("…" if start + size < len(text) else "")


def _start(text: str, size: int, around: Sequence[str]) -> int:
    lowered = text.lower()
    positions = [p for p in (lowered.find(w) for w in around if w) if p >= 0]
    start = max(0, min(positions) - size // 3) if positions else 0
    return max(0, min(start, len(text) - size))


#: Characters shown of a name in a heading or a turn's role (a tool, an entity).
NAME_CHARS = 80


def name_line(name: str) -> str:
    """A name the agent's session supplied (a tool's, an entity's), on one
    line and short: a line break in it would start a line of its own, which
    a reader takes for another hit (``[2] memory · ...``)."""
    return clip(name, NAME_CHARS)


def role(action: Record) -> str:
    name = _ROLES.get(action.get("action_type") or "", action.get("action_type") or "")
    tool = action.get("tool_name")
    return f"{name} ({name_line(tool)})" if tool else name


#: Characters kept around a snippet before redaction: a secret that starts
#: inside the snippet is still whole in what the redactor sees.
REDACTION_MARGIN = 400


#: How far back from a cut the secret it may fall inside is looked for.
SECRET_CHARS = 16384
#: The characters of a token (base64, base64url, a JWT's dots, hex). Spelt
#: out: the ``string`` module compiles a pattern as it loads, which every
#: recall process would pay for these constants.
_TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+/=.-"


def snippet(text: str, size: int, around: Sequence[str] = ()) -> str:
    """``clip`` of the redacted text. The redactor reads a generous cut around
    the snippet rather than the whole text (an action may hold 200,000
    characters; recall shows a few hundred of them)."""
    if len(text) <= size + 2 * REDACTION_MARGIN:
        return clip(redacted(text), size, around)
    # Cut as is: line structure matters to the redactor.
    start = max(0, _start(text, size, around) - REDACTION_MARGIN)
    cut = _secret_start(text, start)
    shown = clip(redacted(text[cut : start + size + 2 * REDACTION_MARGIN]), size, around)
    # A secret redacted whole can bring the snippet to the cut's start.
    return shown if cut == 0 or shown.startswith("…") else "…" + shown


def _secret_start(text: str, start: int) -> int:
    """``start``, or the start of the secret it may fall inside, which the
    redactor knows by its first characters: a private key block's header (its
    lines are tokens of their own), else the token the cut splits (a JWT runs
    longer than the margin). Without it, the rest of the secret showed."""
    low = max(0, start - SECRET_CHARS)
    begin = text.rfind("-----BEGIN ", low, start)
    if begin >= 0 and "-----END " not in text[begin:start]:
        return begin
    return low + len(text[low:start].rstrip(_TOKEN_CHARS))


def turn_text(window: Sequence[Record], matched: Collection[str], words: Sequence[str]) -> str:
    """The matched turns with the turns shown around them (their exchange,
    or their neighbours), one line each, the matches marked ``>>``."""
    lines = []
    for action in window:
        hit = action["action_id"] in matched
        size = TURN_CHARS if hit else NEIGHBOUR_CHARS
        body = snippet(action.get("text") or "", size, words)
        lines.append(f"{'>>' if hit else '  '} {role(action)}: {body}")
    return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: ~4 characters per token for ASCII, one per
    other character (CJK runs close to one token per character)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


def _heading(number: int, hit: Record) -> str:
    when = (hit.get("timestamp") or "")[:16].replace("T", " ") or "undated"
    if hit["kind"] == "entity":
        kind = f"entity {name_line(hit.get('entity') or '')}"
        if hit.get("entity_type"):
            kind += f" ({name_line(hit['entity_type'])})"
        sessions = hit.get("sessions") or []
        shown = ", ".join(sessions[:5]) + (
            f" and {len(sessions) - 5} more" if len(sessions) > 5 else ""
        )
        return f"[{number}] {kind} · last {when} · mentioned in session {shown}"
    where = f"session {hit['session_id']}" if hit.get("session_id") else "no session"
    return f"[{number}] {hit['kind']} · {when} · {where}{also_in(hit)}"


def also_in(hit: Record) -> str:
    """`` · also in 3 sessions`` for a text found in more sessions than its own."""
    count = len(hit.get("also_in") or ())
    if not count:
        return ""
    return f" · also in {count} session{'s' if count > 1 else ''}"


def render(hits: Sequence[Record], max_tokens: int = 1500, query: str | None = None) -> str:
    """Hits as text an agent can read, best first, each dated and attributed
    to its session, in at most ``max_tokens`` (estimated). Hits that do not
    fit are left out; a hit cut short ends with '…'."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        from sessions_graph.errors import MemoryValidationError

        raise MemoryValidationError("max_tokens must be an integer >= 1")
    title = f"Recalled for {query!r}:" if query else "Recalled:"
    if not hits:
        return _cut(f"{title} nothing found.", max_tokens)
    out = [title]
    used = estimate_tokens(title)
    for number, hit in enumerate(hits, start=1):
        block = _heading(number, hit) + "\n" + _indent(hit.get("text") or "")
        cost = estimate_tokens(block) + 1
        if used + cost <= max_tokens:
            out.append(block)
            used += cost
            continue
        room = max_tokens - used - 1
        if room >= 24:  # worth showing a cut hit rather than nothing
            out.append(_cut(block, room))
        break
    if len(out) == 1:  # not even the first hit fits: show what does
        return _cut(title + "\n" + _heading(1, hits[0]), max_tokens)
    return "\n".join(out)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _cut(text: str, tokens: int) -> str:
    """``text`` cut to about ``tokens``, ending with '…' when cut."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) + 1 <= tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + "…"
