"""Secret redaction, applied before any text is stored as a chunk or sent to an LLM.

Tool output routinely carries credentials (``cat .env``, ``env``, a failing
``curl`` with its Authorization header). Chunks are shared, searchable and
sent to a third-party model, so every unit passes through ``redact`` first and
each secret becomes a marker such as ``[REDACTED:aws_access_key]`` that keeps
the sentence readable for extraction while carrying nothing exploitable.

The rules favour over-redaction: a lost word costs little, a leaked key a lot.
They still leave code and prose that merely *name* a secret alone
(``token = tokenizer.encode(text)``, ``def check_password(pw):``,
``--password-file /path``, ``password: str``), because those are most of what a
coding session says about secrets, and the memory is useless without them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

MARKER = "[REDACTED:{kind}]"
_ALREADY = "[REDACTED"


class _Pattern:
    """A regex compiled on first use. The rules are many large verbose
    patterns (tens of milliseconds to compile); the hook's context injection
    redacts a few short texts, whose hints wake only a rule or two."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def sub(self, replace: Callable[[re.Match[str]], str], text: str) -> str:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled.sub(replace, text)


class _Rule(NamedTuple):
    kind: str
    pattern: _Pattern
    #: Lower-case substrings of which at least one must occur for the rule to
    #: run: a unit without "token" anywhere skips every token rule, which keeps
    #: ``redact`` cheap on the ordinary unit that holds no secret at all.
    hints: tuple[str, ...]
    replace: Callable[[re.Match[str]], str]


def _rule(kind: str, regex: str, *hints: str) -> _Rule:
    """A rule that replaces its ``secret`` group, or the whole match if it has
    none, with the ``kind`` marker. A secret that is already a marker is kept,
    so that a general rule never re-wraps what a precise one redacted."""
    pattern = _Pattern(regex, re.IGNORECASE | re.VERBOSE)
    marker = MARKER.format(kind=kind)

    def replace(match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex:
            return marker
        if match.group("secret").startswith(_ALREADY):
            return match.group(0)
        start, end = match.span("secret")
        whole, offset = match.group(0), match.start()
        return f"{whole[: start - offset]}{marker}{whole[end - offset :]}"

    return _Rule(kind, pattern, hints, replace)


def _shape(kind: str, regex: str, *hints: str) -> _Rule:
    """A provider token, matched case-sensitively and only at the start of a
    word. The word-start test is made here rather than with a leading ``\\b``
    because a pattern that opens with a literal prefix (``hf_``) is searched
    for as a string, some thirty times faster than trying every position."""
    pattern = _Pattern(regex)
    marker = MARKER.format(kind=kind)

    def replace(match: re.Match[str]) -> str:
        before = match.string[match.start() - 1 : match.start()]
        return match.group(0) if before.isalnum() or before == "_" else marker

    return _Rule(kind, pattern, hints, replace)


# --- Building blocks (verbose-mode regex source, shared by several rules) ---

#: An unquoted value that is code or a placeholder, not a secret: a reference
#: (``$DB_PASS``, ``%TOKEN%``, ``{{ secrets.X }}``, ``<your-token>``), a type
#: or constant (``password: str``, ``token = None``), a call or subscript
#: (``tokenizer.encode(text)``, ``os.environ["X"]``), an attribute path
#: (``self.token``), or an earlier marker.
_NOT_A_VALUE = r"""
    (?! [$%<] | \{\{ | \[REDACTED
      | (?:str|bytes|int|bool|string|number|text|none|null|nil|true|false
          |undefined|yes|no|optional|secretstr|any)\b
      | [A-Za-z_][\w.]*[(\[]
      | [A-Za-z_]+(?:\.[A-Za-z_]+)+(?![\w.@:/])
    )
"""
#: A value after a separator. Quoted: everything up to the closing quote (or
#: the end of the line if the quote never closes), so that spaces, commas and
#: escaped quotes inside a password cannot end it early; a quoted shell
#: variable (``"$GITHUB_TOKEN"``) is a reference and stays. Unquoted: up to
#: whitespace, a quote or ``;`` (connection strings separate fields with it),
#: leaving trailing ``,)]}`` that close the surrounding syntax; it needs 3
#: characters so that flags like ``auth=on`` survive.
_VALUE = rf"""
    (?P<q>["'`])?
    (?P<secret>(?(q)
        (?!\$\{{?\w+\}}?(?P=q)) (?:\\.|(?!(?P=q))[^\\\n])+
      | {_NOT_A_VALUE} (?=[^\s"'`;]{{3}}) [^\s"'`;]+? (?=[,)\]}}]*(?:[\s"'`;]|$))
    ))
"""
#: ``=``, ``=>`` or ``:=`` take any value; ``:`` only a quoted one or one with
#: a digit or symbol, because ``Password: required`` and ``token: str`` are
#: prose and annotations far more often than credentials.
_SEPARATOR = r"""
    ["']?[ \t]*
    (?: (?:=>?|:=)(?![=>]) [ \t]*
      | :(?![:=]) [ \t]* (?=["'`]|[^\s"'`]*[^A-Za-z\s"'`])
    )
"""


def _assignment(keywords: str) -> str:
    """``NAME=value`` where NAME *ends* in ``keywords`` (``DB_PASS``, ``authToken``,
    ``X-Api-Key``), so ``max_tokens: 4096`` and ``password_min_length=8`` are not
    secrets; ``password=password`` passes a variable on and is kept too."""
    return rf"(?P<kw>{keywords}) {_SEPARATOR} (?!(?P=kw)\b) {_VALUE}"


def _flag(keywords: str) -> str:
    """A command-line flag whose own name ends in a secret word and whose value
    follows: ``--password s3cr3t``, ``--api-key=abc``. ``--password-file /p``
    and ``--password-stdin`` name other flags; ``--no-password`` takes no value;
    paths, ``-x`` flags, metavars in help output (``--token TOKEN``,
    ``--token string``) and prose about the flag are not values."""
    return rf"""
        (?<![\w-])--(?!no-)[\w-]*?(?:{keywords}) (?:=|[ \t]+)
        (?![-/~]|(?-i:[A-Z][A-Z_]*)\b|(?:flag|option|argument|parameter|switch)\b) {_VALUE}
    """


_PASSWORD_WORDS = r"password|passwd|passphrase|pass|[_\-.]pwd"
_SECRET_WORDS = r"""
    secret[_\-]?key|secret|auth|api[_\-]?key|access[_\-]?key|private[_\-]?key
    |account[_\-]?key|credentials?|dsn
    # Session cookies by their usual names only: ``session_id`` and
    # ``sessionId`` identify the sessions this very store is made of.
    |(?-i:sessionid|SESSIONID|PHPSESSID|JSESSIONID|sessid)
"""

#: Every rule, most specific first. Order matters twice over. A precise rule
#: names the secret accurately (``stripe_key`` rather than ``secret``) and
#: knows where it ends, whereas a general ``NAME=value`` rule would take the
#: rest of a query string or connection string with it; and since each rule
#: skips a value that is already a marker, whatever a precise rule claimed is
#: never re-wrapped or split by a later, more general one.
RULES: tuple[_Rule, ...] = (
    # Whole key blocks (RSA, EC, OpenSSH, PKCS#8, "PGP PRIVATE KEY BLOCK"),
    # to the end of the text when the END line was cut off.
    _rule(
        "private_key",
        r"""-----BEGIN[ ][A-Z0-9 ]*PRIVATE[ ]KEY[A-Z0-9 ]*-----(?s:.*?)
            (?:-----END[ ][A-Z0-9 ]*PRIVATE[ ]KEY[A-Z0-9 ]*-----|\Z)""",
        "private key",
    ),
    # Provider token shapes, recognisable wherever they appear.
    _shape("anthropic_api_key", r"sk-ant-[\w\-]{16,}", "sk-ant-"),
    _shape("openai_api_key", r"sk-(?:proj-|svcacct-|admin-)?[\w\-]{16,}", "sk-"),
    _shape(
        "stripe_key",
        r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{16,}",
        "_live_",
        "_test_",
        "whsec_",
    ),
    _shape("github_token", r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}", "gh", "github_pat_"),
    _shape("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt|ft|oas)-[\w\-]{20,}", "gl"),
    _shape("slack_token", r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}", "xox", "xapp-"),
    _shape("huggingface_token", r"hf_[A-Za-z0-9]{30,}", "hf_"),
    _shape("npm_token", r"npm_[A-Za-z0-9]{36}\b", "npm_"),
    _shape("pypi_token", r"pypi-AgE[\w\-]{50,}", "pypi-"),
    _shape("google_api_key", r"AIza[\w\-]{30,}", "aiza"),
    _shape("aws_access_key", r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),
    _shape("twilio_api_key", r"SK[0-9a-f]{32}\b", "sk"),
    _shape("sendgrid_api_key", r"SG\.[\w\-]{20,}\.[\w\-]{20,}", "sg."),
    _shape("jwt", r"eyJ[\w\-]{8,}\.[\w\-]{8,}\.[\w\-]{8,}", "eyj"),
    # URLs: webhook paths are the credential; so are a userinfo password (which
    # may itself hold "@": the last "@" before the host ends it) and query or
    # fragment parameters named like secrets (Azure SAS ``sig``, ``X-Amz-Signature``).
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[\w/\-]+)",
        "hooks.slack",
    ),
    _rule("discord_webhook", r"discord(?:app)?\.com/api/webhooks/(?P<secret>[\w/\-]+)", "discord"),
    _rule("url_password", r"\b[a-z][\w+.\-]*://[^\s:/@]*:(?P<secret>[^\s/]+)@", "://"),
    _rule(
        "url_secret",
        r"""[?&;\#][\w.\-]*?(?:sig|signature|key|token|secret|password|passwd|pass|pwd|auth|credential)
            =(?P<secret>[^&\s#"'<>]+)""",
        "?",
        "&",
        "#",
    ),
    # HTTP headers. With a scheme, everything after it; without, a value that
    # looks like a credential, so "Authorization: required" reads on.
    _rule(
        "authorization",
        r"""\bauthorization["']?[ \t]*[:=][ \t]*["']?
            (?:bearer|basic|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)[ \t]+
            (?P<secret>[^\s"'`,]+)""",
        "authorization",
    ),
    _rule(
        "authorization",
        r"""\bauthorization["']?[ \t]*[:=][ \t]*["']?
            (?P<secret>(?=[^\s"'`,]*[\d=+/_.\-])[^\s"'`,]{8,})""",
        "authorization",
    ),
    _rule(
        "bearer_token",
        r"\bbearer[ \t]+(?P<secret>(?=[\w\-.~+/]*\d)[\w\-.~+/]{8,}=*|[\w\-.~+/]{20,}=*)",
        "bearer",
    ),
    # A cookie header carries nothing but session state: all of it goes.
    _rule(
        "cookie",
        r"""\b(?:set-)?cookie["']?[ \t]*:[ \t]*
            (?P<q>["'])?(?P<secret>(?(q)(?:(?!(?P=q))[^\n])+|(?=[^\n"'`]*=)[^\n"'`]+))""",
        "cookie",
    ),
    # Command lines whose secret follows a short or positional argument.
    _rule(
        "password",
        r"""\bcurl\b(?:[^\n]|\\\n)*?(?<!\S)(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)?["']?
            [^\s:"']*:(?P<secret>[^\s"']+)""",
        "curl",
    ),
    _rule(
        "password",
        r"""\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:[ \t]+registry)?)[ \t]+login\b
            [^\n]*?[ \t]-p(?:[ \t]+|=)(?P<secret>[^\s"']+)""",
        "login",
    ),
    _rule("password", r"\bsshpass[ \t]+-p[ \t]*(?P<secret>[^\s\"']+)", "sshpass"),
    # ``mysql -pSECRET`` (attached; ``-p db`` would prompt and name a database).
    _rule(
        "password",
        r"""\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?
            [ \t]-p(?P<secret>[^\s"']+)""",
        "mysql",
        "mariadb",
    ),
    _rule("password", r"\bpass:(?P<secret>[^\s\"']+)", "pass:"),  # openssl -passin pass:X
    _rule(
        "aws_secret_key",
        r"""\baws[ \t]+configure[ \t]+set[ \t]+
            (?:[\w.]+\.)?(?:aws_secret_access_key|aws_session_token)[ \t]+(?P<secret>[^\s"']+)""",
        "aws",
    ),
    # .netrc: ``machine h login u password p``, on one line or several.
    _rule("password", r"\blogin\s+\S+\s+password\s+(?P<secret>\S+)", "login"),
    _rule("password", _flag("password|passwd|passphrase|pass"), "--"),
    _rule("token", _flag("token"), "--"),
    _rule("secret", _flag(r"secret|api-?key|access-?key|secret-?key"), "--"),
    # NAME=value, most telling name first.
    _rule("aws_secret_key", _assignment(r"aws[_\-]?secret[_\-]?(?:access[_\-]?)?key"), "aws"),
    _rule("password", _assignment(_PASSWORD_WORDS), "pass", "pwd"),
    _rule("token", _assignment("token"), "token"),
    _rule(
        "secret",
        _assignment(_SECRET_WORDS),
        "secret",
        "auth",
        "key",
        "credential",
        "dsn",
        "sess",
    ),
    # Any other ``*KEY`` name (``STRIPE_KEY``, ``MASTER_KEY``) only with a long
    # value holding a digit, so ``SORT_KEY=name`` and ``primary_key: id`` stay.
    _rule(
        "secret",
        r"""key["']?[ \t]*[:=][ \t]*["']?
            (?P<secret>(?=[\w+/=.\-]*\d)(?![\w.]*[(\[])[\w+/=.\-]{16,})""",
        "key",
    ),
)


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a marker."""
    lowered = text.lower()  # hints are looked up once, in the original text
    for rule in RULES:
        if any(hint in lowered for hint in rule.hints):
            text = rule.pattern.sub(rule.replace, text)
    return text
