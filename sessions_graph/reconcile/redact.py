"""Secret redaction, applied before any text is stored as a chunk or sent to an LLM.

Tool output routinely carries credentials (``cat .env``, ``env``, a failing
``curl`` with its Authorization header). Chunks are shared, searchable and
sent to a third-party model, so every unit passes through ``redact`` first and
each secret becomes a marker such as ``[REDACTED:aws_access_key]`` that keeps
the sentence readable for extraction while carrying nothing exploitable.

The rules favour over-redaction: a lost word costs little, a leaked key a lot.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARKER = "[REDACTED:{kind}]"


def _marker(kind: str) -> str:
    return MARKER.format(kind=kind)


def _whole(kind: str) -> Callable[[re.Match[str]], str]:
    """Replace the entire match with the ``kind`` marker."""
    return lambda _m: _marker(kind)


# Order matters: blocks and provider-specific shapes first, so that the generic
# name=value rule only sees what the precise rules did not already claim.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
_TOKEN_SHAPES: list[tuple[str, re.Pattern[str]]] = [
    ("anthropic_api_key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai_api_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}")),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
]
#: ``scheme://user:password@host``: keep the user and host, drop the password.
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)")
#: ``Authorization: <scheme> <credentials>``: everything after the scheme.
_AUTH_HEADER = re.compile(
    r"""(?i)(authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest)?\s*)([^\s"',]{8,})"""
)
#: A bare ``Bearer <token>``; the token must look like one (a digit, or long),
#: so that prose such as "bearer authentication" survives.
_BEARER = re.compile(
    r"(?i)\b(bearer\s+)((?=[A-Za-z0-9\-._~+/]*\d)[A-Za-z0-9\-._~+/]{8,}=*|[A-Za-z0-9\-._~+/]{20,}=*)"
)
#: ``NAME=value`` / ``NAME: value`` / ``"name": "value"`` where the name says secret.
_NAMED_SECRET = re.compile(
    r"""(?ix)
    (?P<name>[A-Za-z0-9_.\-]*?
        (?:token|secret|password|passwd|[_\-]pwd|api[_\-]?key|access[_\-]?key
          |secret[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?))
    (?P<sep>["']?\s*[:=]\s*)
    (?P<quote>["']?)
    (?P<value>[^\s"',;}{)]{3,})
    """
)


def _named_secret(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.startswith("[REDACTED"):
        return match.group(0)
    name = match.group("name").lower()
    if "aws" in name and "secret" in name:
        kind = "aws_secret_key"
    elif any(word in name for word in ("password", "passwd", "pwd")):
        kind = "password"
    elif "token" in name:
        kind = "token"
    else:
        kind = "secret"
    return f"{match.group('name')}{match.group('sep')}{match.group('quote')}{_marker(kind)}"


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Keep group 1 (the label), replace group 2 (the secret) unless already done."""

    def replace(match: re.Match[str]) -> str:
        if match.group(2).startswith("[REDACTED"):
            return match.group(0)
        return f"{match.group(1)}{_marker(kind)}"

    return replace


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a marker."""
    text = _PRIVATE_KEY.sub(_whole("private_key"), text)
    for kind, pattern in _TOKEN_SHAPES:
        text = pattern.sub(_whole(kind), text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{_marker('url_password')}{m.group(3)}", text)
    text = _AUTH_HEADER.sub(_keep_prefix("authorization"), text)
    text = _BEARER.sub(_keep_prefix("bearer_token"), text)
    return _NAMED_SECRET.sub(_named_secret, text)
