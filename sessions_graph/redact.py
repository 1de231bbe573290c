"""Secret redaction: applied when an Action is recorded, and again before any
text is stored as a chunk or sent to an LLM.

Tool output routinely carries credentials (``cat .env``, ``env``, a failing
``curl`` with its Authorization header), and tool calls carry the files an
agent writes. Every such text passes through ``redact``: each secret becomes a
marker such as ``[REDACTED:aws_access_key]`` that keeps the sentence readable
while carrying nothing exploitable.

The rules favour over-redaction: a lost word costs little, a leaked key a lot.
They still leave code and prose that merely *name* a secret alone
(``token = tokenizer.encode(text)``, ``def check_password(pw):``,
``--password-file /path``, ``password: str``), because those are most of what a
coding session says about secrets, and the memory is useless without them. A
key named like a password, secret, token or API key gives its value away
whatever the value's characters: ``password: supersecretvalue`` at the start
of a line (YAML, ``heroku config``) is a secret, ``Password: required`` is prose
(a short list of such words is kept).

Secrets hide behind encodings: a tool call is JSON, so a config file the agent
writes arrives with its quotes escaped; terminal output carries colour codes
(``ESC[1mghp_...``); logs carry URL-encoded values (``token%3Dghp_...``). So the
rules run on the raw text, then on each level of a *decoded view* (JSON string
escapes and ``%XX`` undone, ANSI codes dropped; then nested escaping too)
whose characters each know where they came from, so that what a rule finds
there is cut out of the raw text.

Cost, because recording runs inside agent hooks:

* nothing is compiled at import; a rule compiles the first time a text holds
  one of its hints (a lower-case substring without which it cannot match);
* every pattern does bounded work from each starting position (no unbounded
  scan that can fail and be retried from the next position), so a text costs
  time linear in its length, adversarial ones included (``"curl " * 40000``
  took two minutes with the earlier, unbounded patterns);
* a rule that needs a command before its match (``curl ... -u user:pw``) finds
  the match first and looks for the command on the match's line, once per
  line, instead of scanning from every ``curl`` to the end of its line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

MARKER = "[REDACTED:{kind}]"
_ALREADY = "[REDACTED"

#: A secret a rule found: (start, end, marker) in the text it searched.
_Span = tuple[int, int, str]


class _Text:
    """A text a rule pass looks at, and its lower case (where hints are found)."""

    __slots__ = ("lowered", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower()


class _Rule:
    """One kind of secret: a pattern compiled on first use, the hints that
    gate it, and how a match becomes the span to replace."""

    __slots__ = (
        "_back",
        "_compiled",
        "_context",
        "_flags",
        "_lines",
        "_plain_value",
        "_shape",
        "_source",
        "hints",
        "kinds",
        "name",
    )

    def __init__(
        self,
        kinds: str | dict[str, str],
        source: str,
        hints: tuple[str, ...],
        *,
        flags: int = re.ASCII | re.IGNORECASE | re.VERBOSE,
        shape: bool = False,
        context: str | None = None,
        back: int | str | None = 0,
        lines: int = 1,
        plain_value: bool = False,
        name: str = "",
    ) -> None:
        #: What the rule catches, in a word or a sample (``curl -u user:password``):
        #: unique, so that a test can require a probe that only this rule catches.
        self.name = name or (kinds if isinstance(kinds, str) else "")
        #: The marker kind, or {group: kind} when the group that took part in
        #: the match names it: one pattern for several key words compiles
        #: once, and compiling is most of what a hook process pays here.
        self.kinds = kinds
        #: Lower-case substrings of which at least one must occur for the rule
        #: to run: a unit without "token" anywhere skips every token rule.
        self.hints = hints
        self._source = source
        self._flags = flags
        #: ASCII: tokens and key names are ASCII, and compiling for Unicode
        #: case folding costs twice as long (compiling is the hook's cost).
        self._compiled: re.Pattern[str] | None = None
        self._shape = shape
        self._context = context
        #: Where a match can start, relative to a hint found in the text: at
        #: most ``back`` characters before it, or at the start of its line
        #: ("line"); the pattern is then only tried there, on the ``lines``
        #: lines from there (an IGNORECASE alternation of key words costs
        #: about half a microsecond per position tried). None: search the
        #: whole text (a literal prefix makes that as cheap, or the match's
        #: start is not tied to a hint).
        self._back = back
        self._lines = lines
        #: Whether an unquoted ``secret`` may be code instead (``_is_not_a_value``).
        self._plain_value = plain_value

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def _marker(self, match: re.Match[str]) -> str:
        if isinstance(self.kinds, str):
            return MARKER.format(kind=self.kinds)
        group = next(name for name in self.kinds if match.group(name) is not None)
        return MARKER.format(kind=self.kinds[group])

    def _matches(self, view: _Text) -> Iterator[re.Match[str]]:
        """Leftmost, non-overlapping matches, as ``finditer`` would give them."""
        if self._back is None or len(view.lowered) != len(view.text):
            yield from self.pattern.finditer(view.text)
            return
        text, lowered = view.text, view.lowered
        starts: set[int] = set()
        for hint in self.hints:
            at = lowered.find(hint)
            while at >= 0:
                if self._back == "line":
                    starts.add(text.rfind("\n", 0, at) + 1)
                    at = text.find("\n", at)  # one start per line is all there is
                    if at < 0:
                        break
                else:
                    starts.update(range(max(0, at - int(self._back)), at + 1))
                at = lowered.find(hint, at + 1)
        # Starts come in order, so each line end is looked for once.
        match_at, last_end, line_end, end = self.pattern.match, 0, -1, -1
        for start in sorted(starts):
            if start < last_end:
                continue
            if start > line_end:
                line_end = end = _line_end(text, start)
                for _ in range(self._lines - 1):
                    end = _line_end(text, end + 1)
            match = match_at(text, start, end)
            if match is not None:
                last_end = max(match.end(), start + 1)
                yield match

    def find(self, view: _Text) -> list[_Span]:
        """The secrets this rule sees in ``view``, in order, not overlapping."""
        text = view.text
        pattern = self.pattern
        has_secret = "secret" in pattern.groupindex
        has_quote = "q" in pattern.groupindex
        context = _LineContext(text, self._context) if self._context else None
        spans: list[_Span] = []
        for match in self._matches(view):
            start, end = match.span("secret") if has_secret else match.span()
            if self._shape:
                # A provider token counts only at the start of a word. Tested
                # here rather than with a leading ``\b``, because a pattern that
                # opens with a literal (``hf_``) is searched for as a string,
                # some thirty times faster than trying every position.
                before = text[start - 1 : start]
                if before.isalnum() or before == "_":
                    continue
            elif text.startswith(_ALREADY, start):
                continue  # a precise rule got here first: never re-wrap its marker
            if context is not None and not context.before(match.start()):
                continue
            if (has_quote and match.group("q") is None) or self._plain_value:
                # An unquoted value leaves the ``,)]}`` that close the syntax around it.
                while end > start + 1 and text[end - 1] in ",)]}":
                    end -= 1
                if _is_not_a_value(text[start:end]):
                    continue
            spans.append((start, end, self._marker(match)))
        return spans


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end


class _LineContext:
    """Whether a command (``curl``, ``mysql``) occurs earlier on a match's
    logical line (a line ending in a backslash continues). Matches come in
    order, so each stretch of text is searched once: linear in the text,
    however many matches one line holds."""

    def __init__(self, text: str, regex: str) -> None:
        self.text = text
        self.regex = re.compile(regex, re.ASCII | re.IGNORECASE | re.VERBOSE)
        self.searched_to = 0  # searched from the line start up to here
        self.found = False
        self.last = 0  # the previous match's position

    def before(self, position: int) -> bool:
        text = self.text
        newline = text.rfind("\n", self.last, position)
        while newline > self.last and text[newline - 1] == "\\":  # a continued line
            newline = text.rfind("\n", self.last, newline - 1)
        if newline >= 0:  # a new line since the previous match
            self.searched_to, self.found = newline + 1, False
        self.last = position
        if not self.found and self.searched_to < position:
            self.found = self.regex.search(text, self.searched_to, position) is not None
            # Back up by a command's length, so a command the search's end
            # cut in two is found whole by the next search.
            self.searched_to = max(self.searched_to, position - 32)
        return self.found


def _rule(
    kinds: str | dict[str, str],
    regex: str,
    *hints: str,
    context: str | None = None,
    back: int | str | None = 0,
    lines: int = 1,
    plain_value: bool = False,
    name: str,
) -> _Rule:
    """A rule that replaces its ``secret`` group, or the whole match if it has
    none, with the marker; ``context`` must occur earlier on the same line."""
    if context is not None:
        back = None  # the match is not where the hint (the command) is
    return _Rule(
        kinds,
        regex,
        hints,
        context=context,
        back=back,
        lines=lines,
        plain_value=plain_value,
        name=name,
    )


def _shape(kind: str, regex: str, *hints: str) -> _Rule:
    """A provider token, matched case-sensitively and only at the start of a word."""
    return _Rule(kind, regex, hints, flags=re.ASCII | re.VERBOSE, shape=True, back=None, name=kind)


# --- Building blocks (verbose-mode regex source, shared by several rules) ---
# Every variable-length part that can fail and be retried from the next
# position is bounded ({0,64}, {0,256}); parts left unbounded always end the
# match when they stop, so no position is scanned twice.

#: Words that, as a value, are code or prose rather than a secret: types and
#: constants (``password: str``, ``token = None``) and the words forms and docs
#: put after a field name (``Password: required``).
_NOT_SECRET_WORDS = frozenset(
    """str bytes int bool string number text none null nil true false undefined yes no
    optional secretstr any required hidden empty unset unknown omitted redacted masked
    invalid incorrect wrong missing expired changed updated reset ok set enabled disabled
    """.split()
)
#: An unquoted value that is code or a placeholder, not a secret: a reference
#: (``$DB_PASS``, ``%TOKEN%``, ``{{ secrets.X }}``, ``<your-token>``), a call or
#: subscript (``tokenizer.encode(text)``, ``os.environ["X"]``) or an attribute
#: path (``self.token``). Tested on a value a rule found, in Python rather than
#: inside each rule's pattern: compiled once instead of five times, which is
#: most of what a hook process would pay for redaction.
_NOT_A_VALUE_SOURCE = r"""
    [$%<] | \{\{
  | [A-Za-z_][\w.]{0,64}[(\[]
  | [A-Za-z_]{1,64}(?:\.[A-Za-z_]{1,64}){1,8}(?![\w.@:/])
"""
_not_a_value: re.Pattern[str] | None = None


def _is_not_a_value(value: str) -> bool:
    global _not_a_value
    word = 0
    while word < len(value) and value[word].isascii() and value[word].isalpha():
        word += 1
    if word and value[:word].lower() in _NOT_SECRET_WORDS:
        rest = value[word : word + 1]
        if not (rest.isalnum() or rest == "_"):
            return True
    if _not_a_value is None:
        _not_a_value = re.compile(_NOT_A_VALUE_SOURCE, re.VERBOSE)
    return _not_a_value.match(value) is not None


#: A value after a separator. Quoted: everything up to the closing quote (or
#: the end of the line if the quote never closes), so that spaces, commas and
#: escaped quotes inside a password cannot end it early; a quoted shell
#: variable (``"$GITHUB_TOKEN"``) is a reference and stays. Unquoted: up to
#: whitespace, a quote, ``;`` (connection strings separate fields with it) or
#: an escaped newline, tab or quote (the value sits in a JSON string), unless
#: ``_is_not_a_value``; ``find`` gives back trailing ``,)]}``. It needs 3
#: characters so that flags like ``auth=on`` survive.
#: Never one that starts with escaped quotes (``\\\"pw\\\"``, JSON inside JSON):
#: taking the backslash would break the escaping and leave the password; the
#: decoded view, which sees the quotes, cuts the password alone.
_VALUE = r"""
    (?P<q>["'`])?
    (?P<secret>(?(q)
        (?!\$\{?\w{1,64}\}?(?P=q)) (?:\\.|(?!(?P=q))[^\\\n])+
      | (?=[^\s"'`;]{3}) (?!\\+["'`]) (?:[^\s"'`;\\]|\\(?![nrt"]))+
    ))
"""


def _arg(stop: str = "") -> str:
    """A command-line argument that is a password: quoted, up to its closing
    quote (``-p 'Pa55&word'``; a quoted shell variable is a reference and
    stays), or bare, up to whitespace, a quote or a shell operator (or one
    of ``stop``). A bare value never starts with an escaped quote, however
    many times escaped: in a JSON tool call, ``-p \\"x\\"`` (``-p \\\\\\"x``
    in JSON inside JSON) is left to the decoded view, which sees the
    quotes, so that only the password is cut and the JSON stays valid."""
    stop = re.escape(stop)
    return rf"""
    (?P<q>["'])?
    (?P<secret>(?(q)
        (?!\$\{{?\w{{1,64}}\}}?(?P=q)) (?:\\.|(?!(?P=q))[^\\\n])+
      | (?!\\+["'])(?:[^\s"'`;|&<>\\{stop}]|\\(?![nrt"']))+
    ))
"""


#: A positional argument before the password (a file, a user name).
_WORD_ARG = r"""(?:"[^"\n]{0,256}"|'[^'\n]{0,256}'|[^\s"'\\]{1,256})"""
#: htpasswd's flags (``-b``, ``-bc``, ``-B -b``) and the space after them.
_HTPASSWD_FLAGS = r"(?:[ \t]{1,64}-[A-Za-z]{1,8}){1,4}[ \t]{1,64}"

#: ``=``, ``=>`` or ``:=`` take any value; ``:`` only a quoted one or one with
#: a digit or symbol, because ``Password: required`` and ``token: str`` are
#: prose and annotations far more often than credentials (``_yaml_key`` takes
#: letters-only values where the key starts a line).
_SEPARATOR = r"""
    ["']?[ \t]{0,64}
    (?: (?:=>?|:=)(?![=>]) [ \t]{0,64}
      | :(?![:=]) [ \t]{0,64} (?=["'`]|[^\s"'`]{0,256}[^A-Za-z\s"'`])
    )
"""

_PASSWORD_WORDS = r"password|passwd|passphrase|pass|[_\-.]pwd"
_TOKEN_WORDS = r"token"
_SECRET_WORDS = r"""
    secret[_\-]?key|secret|auth|api[_\-]?key|access[_\-]?key|private[_\-]?key
    |account[_\-]?key|(?:master|signing|encryption|client|consumer|license|app)[_\-]?key
    |credentials?|dsn
    # Session cookies by their usual names only: ``session_id`` and
    # ``sessionId`` identify the sessions this very store is made of.
    |(?-i:sessionid|SESSIONID|PHPSESSID|JSESSIONID|sessid)
"""
#: The key words of secrets, each in a group naming its marker's kind.
_KEY_WORDS = (
    rf"(?P<kw>(?P<k_pw>{_PASSWORD_WORDS})|(?P<k_tok>{_TOKEN_WORDS})|(?P<k_sec>{_SECRET_WORDS}))"
)
_KEY_KINDS = {"k_pw": "password", "k_tok": "token", "k_sec": "secret"}
_KEY_HINTS = ("pass", "pwd", "token", "secret", "auth", "key", "credential", "dsn", "sess")


def _assignment() -> str:
    """``NAME=value`` where NAME *ends* in a key word (``DB_PASS``,
    ``authToken``, ``X-Api-Key``), so ``max_tokens: 4096`` and
    ``password_min_length=8`` are not secrets; ``password=password`` passes a
    variable on and is kept too."""
    return rf"{_KEY_WORDS} {_SEPARATOR} (?!(?P=kw)\b) {_VALUE}"


def _yaml_key() -> str:
    """``key: value`` starting a line (YAML, ``heroku config``, ``.env`` shown
    by a tool) whose key ends in a key word: any value of letters goes, short
    of the words forms and code put there (``Password: required``) and the key
    word itself (``token: Token``, an annotation)."""
    return rf"""
        (?m:^)[ \t]{{0,64}}(?:-[ \t]{{1,8}})?["']?[\w.\-]{{0,64}}?{_KEY_WORDS}["']?[ \t]{{0,8}}:
        [ \t]{{1,64}} (?!(?P=kw)\b) (?P<secret>[A-Za-z]{{3,}}) [ \t]{{0,64}}(?m:$)
    """


def _flag() -> str:
    """A command-line flag whose own name ends in a secret word and whose value
    follows: ``--password s3cr3t``, ``--api-key=abc``. ``--password-file /p``
    and ``--password-stdin`` name other flags; ``--no-password`` takes no value;
    paths, ``-x`` flags, metavars in help output (``--token TOKEN``,
    ``--token string``) and prose about the flag are not values."""
    return rf"""
        (?<![\w-])--(?!no-)[\w-]{{0,64}}?
        (?:(?P<f_pw>password|passwd|passphrase|pass)|(?P<f_tok>token)
          |(?P<f_sec>secret|api-?key|access-?key|secret-?key))
        (?:=|[ \t]{{1,64}})
        (?![-/~]|(?-i:[A-Z][A-Z_]{{0,64}})\b|(?:flag|option|argument|parameter|switch)\b) {_VALUE}
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
        r"""-----BEGIN[ ][A-Z0-9 ]{0,64}PRIVATE[ ]KEY[A-Z0-9 ]{0,64}-----(?s:.*?)
            (?:-----END[ ][A-Z0-9 ]{0,64}PRIVATE[ ]KEY[A-Z0-9 ]{0,64}-----|\Z)""",
        "private key",
        back=None,
        name="private key block",
    ),
    # An AWS secret key has no prefix of its own; after its access key id on
    # the same line (the console's credentials CSV, a shell's output) a
    # 40-character base64 word is one.
    _rule(
        "aws_secret_key",
        r"""(?-i:(?:AKIA|ASIA)[0-9A-Z]{16}|\[REDACTED:aws_access_key\])[^\n]{0,64}?
            (?<![A-Za-z0-9/+=])
            (?=[A-Za-z0-9/+]{0,39}(?-i:[a-z]))(?=[A-Za-z0-9/+]{0,39}(?-i:[A-Z0-9/+]))
            (?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
        "akia",
        "asia",
        "redacted:aws_access_key",
        back=1,
        name="aws secret key after its key id",
    ),
    # Provider token shapes, recognisable wherever they appear.
    _shape("anthropic_api_key", r"sk-ant-[\w\-]{16,}", "sk-ant-"),
    _shape("openai_api_key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[\w\-]{16,}", "sk-"),
    _shape("stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", "_live_", "_test_"),
    _shape("stripe_webhook_secret", r"whsec_[A-Za-z0-9]{16,}", "whsec_"),
    _shape("github_token", r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}", "gh", "github_pat_"),
    _shape("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt|ft|oas)-[\w\-]{20,}", "gl"),
    _shape("slack_token", r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}", "xox", "xapp-"),
    _shape("huggingface_token", r"hf_[A-Za-z0-9]{30,}", "hf_"),
    _shape("npm_token", r"npm_[A-Za-z0-9]{36}\b", "npm_"),
    # Word-start lookbehinds: in a run like "pypi-AgEpypi-AgE..." every
    # occurrence would otherwise scan the rest of the run and fail.
    _shape("pypi_token", r"(?<![\w\-])pypi-AgE[\w\-]{50,}", "pypi-"),
    _shape("google_api_key", r"AIza[\w\-]{30,}", "aiza"),
    _shape("aws_access_key", r"(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),
    _shape("twilio_api_key", r"SK[0-9a-f]{32}\b", "sk"),
    _shape("sendgrid_api_key", r"SG\.[\w\-]{20,}\.[\w\-]{20,}", "sg."),
    _shape("jwt", r"(?<![\w\-])eyJ[\w\-]{8,}\.[\w\-]{8,}\.[\w\-]{8,}", "eyj"),
    # A Telegram bot token, ``<bot id>:AA<33 more>``, bare or in the Bot API's
    # URLs (``api.telegram.org/bot<token>/sendMessage``), where it follows "bot".
    _rule(
        "telegram_bot_token",
        r"(?-i:(?:(?<=bot)|(?<![\w:]))(?P<secret>\d{6,12}:AA[\w\-]{30,40})(?![\w\-]))",
        ":aa",
        back=12,
        name="telegram_bot_token",
    ),
    # URLs: webhook paths are the credential; so are a userinfo password (which
    # may itself hold "@": the last "@" before the host ends it) and query or
    # fragment parameters named like secrets (Azure SAS ``sig``, ``X-Amz-Signature``).
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[\w/\-]+)",
        "hooks.slack",
        name="slack_webhook",
    ),
    _rule(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>[\w/\-]+)",
        "discord",
        name="discord_webhook",
    ),
    _rule(
        "url_password",
        r"\b[a-z][\w+.\-]{0,30}://[^\s:/@]{0,256}:(?P<secret>[^\s/]{1,512})@",
        "://",
        back=31,
        name="url_password",
    ),
    _rule(
        "url_secret",
        r"""[?&\#][\w.\-]{0,64}?(?:sig|signature|key|token|secret|password|passwd|pass|pwd|auth
            |credential)=(?P<secret>[^&\s#"'<>]+)""",
        "?",
        "&",
        "#",
        name="url_secret",
    ),
    # HTTP headers. With a scheme, everything after it; without, a value that
    # looks like a credential, so "Authorization: required" reads on.
    _rule(
        "authorization",
        r"""\bauthorization["']?[ \t]{0,64}[:=][ \t]{0,64}["']?
            (?:bearer|basic|token|digest|negotiate|ntlm|apikey|aws4-hmac-sha256)[ \t]{1,64}
            (?P<secret>[^\s"'`,]+)""",
        "authorization",
        name="authorization with a scheme",
    ),
    _rule(
        "authorization",
        r"""\bauthorization["']?[ \t]{0,64}[:=][ \t]{0,64}["']?
            (?P<secret>(?=[^\s"'`,]{0,256}[\d=+/_.\-])[^\s"'`,]{8,})""",
        "authorization",
        name="authorization without a scheme",
    ),
    _rule(
        "bearer_token",
        r"""\bbearer[ \t]{1,64}
            (?P<secret>(?=[\w\-.~+/]{0,256}\d)[\w\-.~+/]{8,}=*|[\w\-.~+/]{20,}=*)""",
        "bearer",
        name="bearer_token",
    ),
    # A cookie header carries nothing but session state: all of it goes.
    _rule(
        "cookie",
        r"""\b(?:set-)?cookie["']?[ \t]{0,64}:[ \t]{0,64}
            (?P<q>["'])?(?P<secret>(?(q)(?:(?!(?P=q))[^\n])+|(?=[^\n"'`]{0,512}=)[^\n"'`]+))""",
        "cookie",
        back=4,
        name="cookie",
    ),
    # Command lines whose secret follows a short or positional argument: the
    # command must come earlier on the same (logical) line. The value is an
    # ``_arg``: quoted or bare, and in a JSON tool call found in the decoded
    # view, so that only the password is cut out and the JSON stays JSON.
    _rule(
        "password",
        rf"""(?<!\S)(?:-u|--user|--proxy-user|-U)(?:[ \t]{{1,64}}|=)?["']?
            [^\s:"'\\]{{0,256}}:{_arg()}""",
        "curl",
        context=r"\bcurl\b",
        name="curl -u user:password",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-p)(?:[ \t]{{1,64}}|=)(?!-){_arg()}",
        "login",
        "mongo",
        context=r"""\b(?:(?:(?:docker|podman|nerdctl|buildah|skopeo|oras|helm)(?:[ \t]+registry)?
            |oc|az)[ \t]+login
            |mongo(?:sh|dump|restore|export|import|stat|top|files)?)\b""",
        name="login -p password",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-p)[ \t]{{0,64}}(?!-){_arg()}",
        "sshpass",
        context=r"\bsshpass\b",
        name="sshpass -p",
    ),
    # ``mysql -pSECRET`` (attached; ``-p db`` would prompt and name a database;
    # ``-P`` is the port), and 7-Zip's ``-pSECRET``.
    _rule(
        "password",
        rf"[ \t](?-i:-p){_arg()}",
        "mysql",
        "mariadb",
        "7z",
        context=r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|7z|7za|7zr)\b",
        name="mysql -pPASSWORD",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-a)[ \t]{{1,64}}(?!-){_arg()}",
        "redis-cli",
        context=r"\bredis-cli\b",
        name="redis-cli -a",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-P)[ \t]{{1,64}}(?!-){_arg()}",
        "zip",
        "sqlcmd",
        "bcp",
        "mosquitto",
        context=r"\b(?:zip|unzip|zipcloak|sqlcmd|bcp|mosquitto_(?:pub|sub|rr))\b",
        name="zip -P password",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-[NP])[ \t]{{1,64}}(?!-){_arg()}",
        "ssh-keygen",
        context=r"\bssh-keygen\b",
        name="ssh-keygen -N passphrase",
    ),
    _rule(
        "password",
        rf"[ \t](?-i:-w)[ \t]{{1,64}}(?!-){_arg()}",
        "ldap",
        context=r"""\bldap(?:search|add|modify|delete|passwd|compare|modrdn|whoami|exop
            |url)\b""",
        name="ldapsearch -w password",
    ),
    # Samba's ``-U user%password``.
    _rule(
        "password",
        rf"""(?<!\S)(?:-U|--user)(?:[ \t]{{1,64}}|=)["']?[^\s%"'\\]{{1,256}}%{_arg()}""",
        "smb",
        "rpcclient",
        "net rpc",
        "net ads",
        context=r"\b(?:smbclient|rpcclient|smbget|smbcacls|smbmap|net[ \t]+(?:rpc|ads))\b",
        name="smbclient -U user%password",
    ),
    # ``htpasswd -b [-c ...] FILE USER PASSWORD``, or ``-nb USER PASSWORD``.
    _rule(
        "password",
        rf"""\bhtpasswd(?=[^\n]{{0,64}}?[ \t]-[A-Za-z]{{0,7}}b)
            (?: (?=[^\n]{{0,64}}?[ \t]-[A-Za-z]{{0,7}}n) {_HTPASSWD_FLAGS} {_WORD_ARG}
              | (?![^\n]{{0,64}}?[ \t]-[A-Za-z]{{0,7}}n) {_HTPASSWD_FLAGS} {_WORD_ARG}
                [ \t]{{1,64}}{_WORD_ARG}
            )[ \t]{{1,64}}{_arg()}""",
        "htpasswd",
        name="htpasswd -b",
    ),
    # Oracle's ``sqlplus user/password@db``.
    _rule(
        "password",
        rf"""\bsqlplus(?:[ \t]{{1,64}}-\w{{1,16}}){{0,4}}[ \t]{{1,64}}["']?[\w$\#.\-]{{1,128}}/
            {_arg(stop="@/")}""",
        "sqlplus",
        name="sqlplus user/password",
    ),
    # Java keystores: ``keytool -storepass X``, ``jarsigner -keypass X``.
    _rule(
        "password",
        rf"""(?<!\S)-(?:src|dest)?(?:store|key)pass[ \t]{{1,64}}(?!-){_arg()}""",
        "storepass",
        "keypass",
        back=8,
        name="keytool -storepass",
    ),
    # A password piped to a command that reads it from stdin.
    _rule(
        "password",
        rf"""\b(?:echo|printf)(?:[ \t]{{1,64}}-[neE]{{1,3}})?[ \t]{{1,64}}{_arg()}(?(q)(?P=q))
            (?=[ \t]{{0,64}}\|[^\n|]{{0,256}}?(?:--password-stdin\b|--stdin\b|\bchpasswd\b
              |\bsudo\b[^\n|]{{0,128}}?[ \t]-[A-Za-z]{{0,8}}S\b))""",
        "echo",
        "printf",
        name="echo password | --password-stdin",
    ),
    _rule("password", rf"\bpass:{_arg()}", "pass:", name="openssl pass:"),
    _rule(
        "aws_secret_key",
        r"""\baws[ \t]{1,64}configure[ \t]{1,64}set[ \t]{1,64}
            (?:[\w.]{1,64}\.)?(?:aws_secret_access_key|aws_session_token)[ \t]{1,64}
            (?P<secret>[^\s"']+)""",
        "aws",
        name="aws configure set",
    ),
    # .netrc: ``machine h login u password p``, on one line or several.
    _rule(
        "password",
        r"\blogin\s{1,64}\S{1,256}\s{1,64}password\s{1,64}(?P<secret>\S+)",
        "login",
        lines=4,
        name=".netrc password",
    ),
    # Kubernetes env lists: ``- name: API_TOKEN`` then ``value: ...``.
    _rule(
        _KEY_KINDS,
        rf"""\bname:[ \t]{{0,64}}["']?[\w.\-]{{0,64}}?{_KEY_WORDS}["']?[ \t]{{0,64}}\n
            [ \t]{{0,64}}value:[ \t]{{0,64}} (?!(?P=kw)\b) {_VALUE}""",
        "name:",
        lines=2,
        name="kubernetes name/value",
    ),
    _rule(
        {"f_pw": "password", "f_tok": "token", "f_sec": "secret"},
        _flag(),
        "--",
        name="--password flag",
    ),
    # NAME=value, most telling name first.
    _rule(
        "aws_secret_key",
        rf"""(?P<kw>aws[_\-]?secret[_\-]?(?:access[_\-]?)?key) {_SEPARATOR}
            (?!(?P=kw)\b) {_VALUE}""",
        "aws",
        name="aws_secret_access_key=",
    ),
    _rule(
        _KEY_KINDS, _yaml_key(), *_KEY_HINTS, back="line", plain_value=True, name="yaml key: value"
    ),
    # A key word starts at most 12 characters before its hint ("encryption_key").
    _rule(_KEY_KINDS, _assignment(), *_KEY_HINTS, back=12, name="NAME=value"),
    # Any other ``*KEY`` name (``STRIPE_KEY``, ``MASTER_KEY``) only with a long
    # value holding a digit, so ``SORT_KEY=name`` and ``primary_key: id`` stay.
    _rule(
        "secret",
        r"""key["']?[ \t]{0,64}[:=][ \t]{0,64}["']?
            (?P<secret>(?=[\w+/.\-]{0,256}\d)(?![\w.]{0,64}[(\[])[\w+/=.\-]{16,})""",
        "key",
        name="*KEY=long value",
    ),
)

# --- The decoded view ---------------------------------------------------------

#: What the decoded view undoes: ANSI escape sequences (raw, or JSON-escaped
#: as ``\u001b[...``), JSON string escapes and URL ``%XX`` escapes.
_ESCAPES_SOURCE = r"""(?P<ansi>(?:\x1b|\\u001[bB])(?:\[[0-?]{0,32}[ -/]{0,8}[@-~]|[@-Z\\-_]))
      | \\u(?P<hex>[0-9a-fA-F]{4}) | \\(?P<c>["\\/bfnrt]) | %(?P<pct>[0-9a-fA-F]{2})"""
_escapes: re.Pattern[str] | None = None
_JSON_CHARS = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
#: Nesting undone at most: a JSON string holding JSON (a tool call writing a
#: JSON file, a tool result printing one).
_DECODE_DEPTH = 2


class _Level:
    """One level of escapes undone: the decoded text, and where each escape
    sat, so that a position in the decoded text maps back to the text it
    came from. Positions are mapped only for the secrets found, which is
    rare: decoding itself stays one regex substitution."""

    __slots__ = ("_keys", "decoded", "escapes")

    def __init__(self, decoded: str, escapes: list[tuple[int, int, int, int]]) -> None:
        self.decoded = decoded
        #: (position in ``decoded``, start and end in the source, decoded length 0 or 1)
        self.escapes = escapes
        self._keys = [e[0] for e in escapes]

    def _escape_at(self, position: int) -> tuple[int, int, int, int] | None:
        """The last escape at or before ``position`` of the decoded text."""
        low, high = 0, len(self._keys)
        while low < high:  # bisect_right, without importing bisect for this
            middle = (low + high) // 2
            if self._keys[middle] <= position:
                low = middle + 1
            else:
                high = middle
        return self.escapes[low - 1] if low else None

    def start(self, position: int) -> int:
        """Where decoded character ``position`` starts in the source."""
        escape = self._escape_at(position)
        if escape is None:
            return position
        at, start, end, length = escape
        return start if position < at + length else end + position - at - length

    def end(self, position: int) -> int:
        """Where decoded character ``position`` ends in the source."""
        escape = self._escape_at(position)
        if escape is None:
            return position + 1
        at, _start, end, length = escape
        return end if position < at + length else end + position - at - length + 1


def _decode(text: str) -> _Level | None:
    """``text`` with one level of escapes undone; None if there is none."""
    global _escapes
    if _escapes is None:
        _escapes = re.compile(_ESCAPES_SOURCE, re.VERBOSE)
    escapes: list[tuple[int, int, int, int]] = []
    shift = 0  # how much shorter the decoded text is so far

    def undo(match: re.Match[str]) -> str:
        nonlocal shift
        kind = match.lastgroup
        if kind == "hex":
            char = chr(int(match.group("hex"), 16))
        elif kind == "c":
            char = _JSON_CHARS[match.group("c")]
        elif kind == "pct":
            char = chr(int(match.group("pct"), 16))
        else:
            char = ""  # an ANSI sequence shows nothing
        start, end = match.span()
        escapes.append((start - shift, start, end, len(char)))
        shift += end - start - len(char)
        return char

    decoded = _escapes.sub(undo, text)
    return _Level(decoded, escapes) if escapes else None


def _decoded_view(text: str) -> list[_Level]:
    """The levels of escapes undone in ``text``, outermost first (at most
    ``_DECODE_DEPTH``); [] if it has none."""
    if "\\" not in text and "%" not in text and "\x1b" not in text:
        return []  # the common case, and no pattern to compile for it
    levels: list[_Level] = []
    current = text
    for _ in range(_DECODE_DEPTH):
        level = _decode(current)
        if level is None:
            break
        levels.append(level)
        current = level.decoded
    return levels


def _splice(text: str, spans: list[_Span]) -> str:
    pieces, last = [], 0
    for start, end, marker in spans:
        pieces += (text[last:start], marker)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _apply_rules(text: str) -> tuple[str, int]:
    """Every rule in order on ``text``; the result and how many secrets went."""
    view = _Text(text)
    count = 0
    for rule in RULES:
        if any(hint in view.lowered for hint in rule.hints):
            spans = rule.find(view)
            if spans:
                view = _Text(_splice(view.text, spans))
                count += len(spans)
    return view.text, count


def _escaped_stretches(text: str) -> list[tuple[int, int]]:
    """The runs of consecutive lines that hold an escape (a backslash, a
    ``%``, an ESC): only there does the decoded view differ from the text, so
    only there is it built and searched. A JSON tool call is one line; a
    tool's output is mostly lines without any."""
    stretches: list[tuple[int, int]] = []
    position = 0
    for line in text.splitlines(keepends=True):
        end = position + len(line)
        if "\\" in line or "%" in line or "\x1b" in line:
            if stretches and stretches[-1][1] == position:
                stretches[-1] = (stretches[-1][0], end)
            else:
                stretches.append((position, end))
        position = end
    return stretches


def _merge_new(found: list[_Span], new: list[_Span]) -> list[_Span]:
    """``found`` with the spans of ``new`` that overlap none of it, in order.
    Both lists are in order and without overlaps, so one pass over them does
    (testing each new span against every found one was quadratic: one match
    per line of a long JSON-escaped text took seconds)."""
    merged: list[_Span] = []
    i = 0
    for span in new:
        start, end, _ = span
        while i < len(found) and found[i][1] <= start:
            merged.append(found[i])
            i += 1
        if i < len(found) and found[i][0] < end:
            continue  # overlaps a found secret
        if merged and merged[-1][1] > start:
            continue  # overlaps the found secret before it
        merged.append(span)
    merged.extend(found[i:])
    return merged


def _decoded_secrets(text: str) -> list[_Span]:
    """The secrets the rules find in each level of the decoded view of
    ``text``, as spans of ``text`` itself (they may overlap across levels).
    Every level, not only the innermost: a JSON file that a tool call writes
    is whole one level down, and one more level undoes the file's own escapes
    (a quote inside its password), where the password seems to end at that
    quote. Within a level, a rule's match overlapping an earlier rule's secret
    is dropped, as in the raw text, where the earlier marker stops it."""
    levels = _decoded_view(text)
    spans = []
    for depth, decoded in enumerate(levels, start=1):
        view = _Text(decoded.decoded)
        found: list[_Span] = []  # in order, not overlapping
        for rule in RULES:
            if any(hint in view.lowered for hint in rule.hints):
                found = _merge_new(found, rule.find(view))
        for start, end, marker in found:
            last = end - 1
            for level in reversed(levels[:depth]):  # innermost first, back to the text
                start, last = level.start(start), level.end(last) - 1
            spans.append((start, last + 1, marker))
    return spans


def _redact_decoded(text: str) -> tuple[str, int]:
    """The rules again on the decoded view of ``text`` (of its stretches with
    escapes); what they find there is cut out of ``text`` itself, so the raw
    text keeps its escaping."""
    found: list[_Span] = []
    for first, last in _escaped_stretches(text):
        spans = _decoded_secrets(text[first:last])
        found += [(start + first, end + first, marker) for start, end, marker in spans]
    if not found:
        return text, 0
    # A later rule may take in an earlier one's marker, and two levels may
    # find the same secret (ended early by a quote the deeper level undid):
    # overlapping spans become one.
    found.sort(key=lambda span: (span[0], -span[1]))
    merged: list[_Span] = []
    for start, end, marker in found:
        if merged and start < merged[-1][1]:
            first_start, last_end, _ = merged[-1]
            merged[-1] = (first_start, max(last_end, end), marker)
        else:  # never empty: a decoded character maps to one source character or more
            merged.append((start, end, marker))
    return _splice(text, merged), len(merged)


def redact_counted(text: str) -> tuple[str, int]:
    """``text`` with every recognised secret replaced by a marker, and how many
    secrets were replaced. Idempotent: redacting the result changes nothing."""
    text, count = _apply_rules(text)
    text, more = _redact_decoded(text)
    return text, count + more


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by a marker."""
    return redact_counted(text)[0]
