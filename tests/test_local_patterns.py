"""The local extractor's patterns, one behaviour per case (no store)."""

from __future__ import annotations

import pytest

from sessions_graph.reconcile.extraction import Extraction
from sessions_graph.reconcile.local import LocalExtractor
from sessions_graph.reconcile.local.patterns import extract_patterns
from sessions_graph.reconcile.local.vocabulary import ENTITY_TYPES
from sessions_graph.reconcile.pipeline import merge_extractions


def found(text: str) -> dict[str, str]:
    return {f.name: f.entity_type for f in extract_patterns(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "see https://user:[REDACTED:url_password]@api.example.com/v1/items?token=x#frag",
            {"https://api.example.com/v1/items": "url", "api.example.com": "host"},
        ),
        (
            '{"command": "pip install -U \'httpx>=0.27,<1\' tenacity==8.2.3"}',
            {"pip": "tool", "httpx": "package", "tenacity": "package", "tenacity 8.2.3": "version"},
        ),
        (
            "$ git push origin v2.8.0 && git checkout -b fix/retry-backoff",
            {"git": "tool", "v2.8.0": "version", "fix/retry-backoff": "branch"},
        ),
        (
            "export DB_PASSWORD=hunter2hunter2\nAPI_URL=https://x.internal/api",
            {"DB_PASSWORD": "env_var", "API_URL": "env_var"},
        ),
        (
            "  File \"/srv/app/billing/invoice.py\", line 114, in build_lines\nKeyError: 'id'",
            {"/srv/app/billing/invoice.py": "file", "invoice.py": "file", "KeyError": "error"},
        ),
        (
            "from sqlalchemy.orm import Session\nimport os.path\nimport numpy as np",
            {
                "sqlalchemy": "package",
                "sqlalchemy.orm": "module",
                "os.path": "module",
                "numpy": "package",
            },
        ),
        ('  "devDependencies": {\n    "vitest": "^1.6.0"\n  }', {"vitest": "package"}),
        (
            "Fixed in PR #214 (see shopco/api#212 and PROJ-42); UTF-8 and SHA-256 stay.",
            {"#214": "issue", "shopco/api#212": "issue", "PROJ-42": "issue"},
        ),
        (
            "Run `ruff check --fix` then rename `get_user` in app.py to `find_user()`.",
            {"ruff": "tool", "get_user": "identifier", "find_user": "identifier", "app.py": "file"},
        ),
        (
            "error[E0382]: borrow of moved value\nnpm ERR! ERESOLVE could not resolve",
            {"E0382": "error", "ERESOLVE": "error"},
        ),
    ],
)
def test_what_the_patterns_find(text: str, expected: dict[str, str]) -> None:
    got = found(text)
    assert {k: got.get(k) for k in expected} == expected
    assert not any("REDACTED" in name or "hunter2" in name for name in got)


def test_no_value_of_an_environment_variable_is_named() -> None:
    got = found("STRIPE_API_KEY=sk_live_not_redacted_here_123\nexport REGION=eu-west-1")
    assert {"STRIPE_API_KEY", "REGION"} <= set(got)
    assert all("sk_live" not in n and "eu-west-1" not in n for n in got)


def test_every_type_is_in_the_vocabulary_and_relations_link_co_mentions() -> None:
    result = LocalExtractor(use_ner=False).extract_text(
        "pytest failed in tests/test_sender.py with TimeoutError; bump tenacity."
    )
    assert {e["entity_type"] for e in result.entities} <= set(ENTITY_TYPES)
    pairs = {frozenset((r["source"], r["target"])) for r in result.relations}
    assert frozenset(("tests/test_sender.py", "TimeoutError")) in pairs
    assert len(pairs) == len(result.relations)  # one relation per pair
    rel = next(r for r in result.relations if "TimeoutError" in (r["source"], r["target"]))
    assert rel["weight"] >= 1 and "co-mention" in rel["keywords"]


def test_merge_keeps_the_first_spelling_and_adds_the_rest_once() -> None:
    local = Extraction(
        entities=[
            {"name": "tenacity", "entity_type": "package", "description": "local"},
            {"name": "sender.py", "entity_type": "file", "description": "local"},
        ],
        relations=[{"source": "tenacity", "target": "sender.py", "weight": 1.0}],
    )
    llm = Extraction(
        entities=[
            {"name": "Tenacity", "entity_type": "Artifact", "description": "A retry library."},
            {"name": "Retry Policy", "entity_type": "Concept", "description": "How we retry."},
        ],
        relations=[
            {"source": "Tenacity", "target": "sender.py", "weight": 3.0, "keywords": "uses"},
            {"source": "Tenacity", "target": "Retry Policy", "weight": 1.0},
        ],
    )

    entities, relations = merge_extractions(local, llm)

    by_name = {e["name"]: e for e in entities}
    assert set(by_name) == {"tenacity", "sender.py", "Retry Policy"}
    assert by_name["tenacity"]["entity_type"] == "package"
    assert by_name["tenacity"]["description"] == "A retry library."
    ends = sorted((r["source"], r["target"], r["weight"]) for r in relations)
    assert ends == [("tenacity", "Retry Policy", 1.0), ("tenacity", "sender.py", 3.0)]


@pytest.mark.parametrize(
    "text",
    [
        "mail alice.smith+ci@mail.example.com and .bob@corp.example.org about it",
        "write to ops@example.io.",
        "(dev-team@lists.example.co.uk)",
    ],
)
def test_e_mail_addresses_are_no_hosts_or_files(text: str) -> None:
    assert found(text) == {}


def _unbounded_repeats(pattern: str) -> list[str]:
    """The repeats of ``pattern`` (``*``, ``+``, ``{n,}``) without an upper bound,
    from the parse tree Python's own regex compiler builds."""
    try:
        from re import _constants as constants  # Python >= 3.11
        from re import _parser as parser
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_constants as constants  # type: ignore[no-redef]
        import sre_parse as parser  # type: ignore[no-redef]

    repeats = {constants.MAX_REPEAT, constants.MIN_REPEAT}
    repeats.add(getattr(constants, "POSSESSIVE_REPEAT", constants.MAX_REPEAT))  # 3.11 on
    found: list[str] = []

    def walk(items: object) -> None:
        for op, arg in items:  # type: ignore[attr-defined]
            if op in repeats:
                low, high, sub = arg
                if high == constants.MAXREPEAT:
                    found.append(f"{{{low},}} over {list(sub)}")
                walk(sub)
            elif op == constants.SUBPATTERN:
                walk(arg[-1])
            elif op == constants.BRANCH:
                for branch in arg[1]:
                    walk(branch)
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                walk(arg[1])

    walk(parser.parse(pattern))
    return found


def test_the_e_mail_pattern_does_bounded_work_from_each_start() -> None:
    """Linear time, shown by the pattern's shape rather than a stopwatch: with
    every repeat bounded, no starting position can scan to the end of a run
    and fail (the unbounded pattern took 2 s for 32 KB of "a.a.a." and grew
    with the square; bench/bench_extract.py --adversarial shows the scaling)."""
    from sessions_graph.reconcile.local import patterns

    assert _unbounded_repeats(patterns._EMAIL.pattern) == []
    assert _unbounded_repeats(r"\b[\w.+-]+@x") != []  # the check sees an unbounded repeat
