"""What a coding session's text names, found with regular expressions.

A chunk is read in stages, most specific first: credentials markers, URLs,
shell commands (tools, packages installed, branches, hosts), tracebacks and
error names, imports and manifests, file paths, hosts, environment variable
names, issue references, versions, identifiers, and finally the word lists
of well-known tools and products for prose. A stage blanks out what it
consumed (same length, so offsets hold) where a later stage could misread
it: a URL's path is not a file, a file name is not a host.

Every finding keeps the pattern that made it (``keyword``), which becomes the
keywords of the co-mention relations. The text has been redacted before it
gets here; on top of that, a URL loses its credentials and query string and an
environment variable is named, never valued.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sessions_graph.reconcile.local.vocabulary import (
    FILE_EXTENSIONS,
    HOST_TLDS,
    KNOWN_FILENAMES,
    KNOWN_ORGANIZATIONS,
    KNOWN_PACKAGES,
    KNOWN_PRODUCTS,
    KNOWN_TOOLS,
    NODE_BUILTINS,
    NOT_ISSUE_KEYS,
    NOT_TOOLS,
    PREFIX_COMMANDS,
    PYTHON_STDLIB,
    RUST_ROOTS,
)

#: When one chunk gives a name two types, the earlier type in this list wins
#: (a tool that was also installed is a tool; a word the model calls a person
#: but a pattern calls a package is a package).
PRECEDENCE = (
    "file",
    "url",
    "error",
    "tool",
    "package",
    "module",
    "host",
    "env_var",
    "branch",
    "issue",
    "version",
    "identifier",
    "product",
    "organization",
    "person",
    "location",
)
_RANK = {t: i for i, t in enumerate(PRECEDENCE)}


@dataclass
class Found:
    """One entity a chunk names: its type, the pattern that found it first,
    and how many times the chunk names it."""

    name: str
    entity_type: str
    keyword: str
    count: int = 1


class Findings:
    """The chunk's entities, one per case-folded name, in order of discovery."""

    def __init__(self) -> None:
        self.by_key: dict[str, Found] = {}

    def add(self, name: str, entity_type: str, keyword: str) -> None:
        name = name.strip()
        if not name or len(name) > 200:
            return
        key = name.casefold()
        found = self.by_key.get(key)
        if found is None:
            self.by_key[key] = Found(name, entity_type, keyword)
            return
        found.count += 1
        if _RANK[entity_type] < _RANK[found.entity_type]:
            found.name, found.entity_type, found.keyword = name, entity_type, keyword

    def add_weak(self, name: str, entity_type: str, keyword: str) -> None:
        """Add a finding from a word list or the model: it never changes the
        type a pattern gave the name (``vitest`` in a manifest is a package)."""
        found = self.by_key.get(name.strip().casefold())
        if found is None:
            self.add(name, entity_type, keyword)
        else:
            found.count += 1

    def has(self, name: str) -> bool:
        return name.casefold() in self.by_key

    def __iter__(self) -> Iterable[Found]:  # type: ignore[override]
        return iter(self.by_key.values())


# --- 1. markers, URLs, e-mail addresses -------------------------------------------
_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
_URL = re.compile(
    r"\b(?P<scheme>https?|wss?|ftp|bolt(?:\+s|\+ssc)?|neo4j(?:\+s)?|postgres(?:ql)?|mysql"
    r"|redis|rediss|mongodb(?:\+srv)?|amqps?|s3|gs|git|ssh|file)://"
    r"(?:[^\s/@<>\"'`]*@)?(?P<host>\[[0-9a-fA-F:]+\]|[\w.-]*)(?::\d+)?"
    r"(?P<path>/[^\s<>\"'`)\]}|,;]*)?"
)
_GITHUB_REF = re.compile(r"github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d+)")
#: An e-mail address, in linear time: it starts only where a run of its
#: characters starts (so a long run without "@" is scanned once, not once
#: from each of its word boundaries: 2 s for 32 KB of "a.a.a."), and every
#: part is bounded by the lengths RFC 5321 allows (64 for the local part and
#: for a label), so no start does more than bounded work.
_EMAIL = re.compile(
    r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){0,8}\.[A-Za-z]{2,63}\b"
)


def _urls(text: str, found: Findings) -> str:
    def one(match: re.Match[str]) -> str:
        host = match.group("host").rstrip(".").lower()
        path = re.split(r"[?#]", match.group("path") or "", maxsplit=1)[0].rstrip(".:!'")
        if path.endswith(")") and "(" not in path:
            path = path[:-1]
        url = f"{match.group('scheme').lower()}://{host}{path}" if host else ""
        if url and "[REDACTED" not in url:
            found.add(url.rstrip("/") if path == "/" else url, "url", "url")
        if host and not host.startswith("["):
            found.add(host, "host", "url")
        ref = _GITHUB_REF.search(match.group(0))
        if ref:
            found.add(f"{ref.group(1)}#{ref.group(2)}", "issue", "url")
        return " " * len(match.group(0))

    text = _URL.sub(one, text)  # before the markers go: a URL's userinfo may hold one
    text = _MARKER.sub(lambda m: " " * len(m.group(0)), text)
    return _EMAIL.sub(lambda m: " " * len(m.group(0)), text) if "@" in text else text


# --- 2. commands -----------------------------------------------------------------
_PROMPT_LINE = re.compile(r"^[ \t]*(?:\$|❯|%|>)[ \t]+(\S.*)$", re.MULTILINE)
_FENCE = re.compile(r"```(?:bash|sh|shell|console|zsh|terminal)?\n(.*?)```", re.DOTALL)
_BACKTICK = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
_RAN_PHRASE = re.compile(
    r"\b(?:[Rr]an|[Rr]un|[Rr]unning|[Ee]xecuted?|[Tt]ry|[Tt]ried|[Uu]se|[Uu]sed)\s*:?\s+"
    r"`([^`\n]{1,200})`"
)
#: An install command inside a sentence: the installer's name is no English word.
_INSTALL_PHRASE = re.compile(
    r"\b(?:pip3?|pipx|npm|yarn|pnpm|cargo|brew|apt-get|gem|poetry|uv) (?:install|add|get)"
    r"(?: +-{1,2}[\w-]+)* +[@\w][\w.@/=<>~^-]*[\w@]"  # in a sentence, only the first name
)
_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\$\(|`)\s*")
_ENV_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_WORD = re.compile(r"^[a-z][\w.+-]*$")
_PKG_SPEC = re.compile(
    r"^(?P<name>@?[A-Za-z0-9][\w.-]*(?:/[\w.-]+)*)(?:\[[^\]]*\])?"
    r"(?:(?P<op>==|>=|<=|~=|!=|>|<|@|=)(?P<ver>[\w.*+-]+)(?:,[<>=!~]=?[\w.*+-]+)*)?$"
)
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)+[\w.+-]*$")

#: Package managers: (tool, its subcommands that take package names).
_INSTALLERS = {
    "pip": {"install", "uninstall", "download", "show"},
    "pip3": {"install", "uninstall", "download", "show"},
    "pipx": {"install", "run", "inject"},
    "uv": {"add", "remove", "install"},
    "poetry": {"add", "remove"},
    "conda": {"install", "remove"},
    "npm": {"install", "i", "add", "uninstall", "remove", "update", "upgrade", "ci"},
    "yarn": {"add", "remove", "upgrade"},
    "pnpm": {"add", "install", "i", "remove", "update"},
    "bun": {"add", "install", "remove"},
    "cargo": {"add", "install", "remove"},
    "go": {"get", "install"},
    "gem": {"install"},
    "brew": {"install", "upgrade", "uninstall"},
    "apt": {"install", "remove"},
    "apt-get": {"install", "remove"},
    "apk": {"add"},
    "dnf": {"install"},
    "yum": {"install"},
}
#: Flags of those commands whose next word is a value, not a package.
_VALUE_FLAGS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url",
    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--python",
    "-p", "--registry", "--features", "--version", "--path", "--git", "--branch", "--tag",
}  # fmt: skip
_GIT_BRANCH_TAKERS = {"checkout", "switch", "merge", "rebase", "branch", "push", "pull"}


def _words(segment: str) -> list[str]:
    return [w.strip("'\"") for w in segment.split()]


def _command(line: str, found: Findings, keyword: str = "command") -> None:
    """One command line: its tools, and what its package managers and git touch."""
    for segment in _SEGMENT_SPLIT.split(line.strip()):
        words = _words(segment)
        while words and _ENV_ASSIGN.match(words[0]):
            found.add(_ENV_ASSIGN.match(words[0]).group(1), "env_var", "command")  # type: ignore[union-attr]
            words.pop(0)
        while words and words[0] in PREFIX_COMMANDS:
            words.pop(0)
            while words and words[0].startswith("-"):
                words.pop(0)
        if not words:
            continue
        tool = (
            words[0].rsplit("/", 1)[-1]
            if "/" in words[0] and not words[0].startswith(".")
            else words[0]
        )
        if not _WORD.match(tool) or tool in NOT_TOOLS or ("." in tool and not tool[-1].isdigit()):
            continue
        args = words[1:]
        sub = args[0] if args and re.match(r"^[a-z][\w-]*$", args[0]) else ""
        found.add(tool, "tool", f"ran {tool} {sub}".strip() if keyword == "command" else keyword)
        if tool.startswith("python") and len(args) >= 2 and args[0] == "-m":
            inner = args[1]
            if inner in ("pip", "venv") and inner == "pip":
                _installer("pip", args[2:], found)
            if _WORD.match(inner):
                found.add(inner, "tool", f"ran python -m {inner}")
            continue
        if (
            tool in ("uv", "poetry", "pdm", "hatch", "pipenv")
            and args[:1] == ["run"]
            and len(args) > 1
        ):
            _command(" ".join(args[1:]), found, keyword)
            continue
        if tool == "uv" and args[:1] == ["pip"]:
            _installer("pip", args[1:], found)
            continue
        if tool in _INSTALLERS:
            _installer(tool, args, found)
        elif tool == "git" and sub in _GIT_BRANCH_TAKERS:
            _git_branch(sub, args[1:], found)
        elif tool in ("ssh", "scp", "rsync", "mosh") and args:
            for arg in args:
                if not arg.startswith("-") and ("@" in arg or tool == "ssh"):
                    host = arg.split("@", 1)[-1].split(":", 1)[0]
                    if re.match(r"^[\w.-]+$", host) and not host.startswith("."):
                        found.add(host.lower(), "host", f"{tool}")
                    break


def _installer(tool: str, args: list[str], found: Findings) -> None:
    if not args or args[0] not in _INSTALLERS.get(tool, ()):
        if tool == "pip" and args and args[0] == "install":
            pass
        else:
            return
    skip = False
    for arg in args[1:]:
        if skip:
            skip = False
            if arg.endswith((".txt", ".in", ".toml")):
                found.add(arg, "file", "requirements")
            continue
        if arg.startswith("-"):
            skip = arg in _VALUE_FLAGS
            continue
        if arg in (".", "..") or arg.startswith((".", "/", "~", "git+", "http")):
            continue
        spec = _PKG_SPEC.match(arg)
        if not spec:
            continue
        name = spec.group("name")
        if tool == "go":
            name = name.split("@", 1)[0]
        elif tool == "brew" and spec.group("op") == "@":
            name = arg  # python@3.12 is the formula's name
        if tool in ("npm", "yarn", "pnpm", "bun") and "@" in name[1:]:
            name = name.rpartition("@")[0]
        name = name.lower() if tool not in ("go",) else name
        found.add(name, "package", f"{tool} {args[0]}")
        op, version = spec.group("op"), spec.group("ver")
        if op in ("==", "@", "=") and version and _VERSIONISH.match(version):
            found.add(f"{name} {version}", "version", f"{tool} {args[0]}")


def _git_branch(sub: str, args: list[str], found: Findings) -> None:
    names = [a for a in args if not a.startswith("-")]
    if sub == "push" or sub == "pull":
        names = names[1:]  # the remote comes first
    elif sub == "checkout" and "--" in args:
        return
    for name in names[:1]:
        name = name.split(":", 1)[0].lstrip("+")
        if (
            re.match(r"^[\w][\w./-]*$", name)
            and not name.startswith(("origin/", "HEAD"))
            and name.rsplit(".", 1)[-1] not in FILE_EXTENSIONS
            and not re.match(r"^[0-9a-f]{7,40}$", name)
            and not _VERSIONISH.match(name)  # git push origin v2.8.0 pushes a tag
            and name not in ("origin", "upstream")
        ):
            found.add(name, "branch", f"git {sub}")


def _json_strings(text: str) -> tuple[str, list[str]] | None:
    """A tool call's JSON input: its string values joined, and its commands.
    None if the text is no JSON object, or one nested too deep for the
    decoder (then it is read as plain text: a ``RecursionError`` here would
    fail the session's reconciliation on every run)."""
    stripped = text.lstrip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    strings: list[str] = []
    commands: list[str] = []
    # Walked with a stack rather than recursion, in document order: what the
    # decoder accepted may still be deeper than the Python frames left here.
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, key = stack.pop()
        if isinstance(value, str):
            (commands if key in ("command", "cmd") else strings).append(value)
        elif isinstance(value, dict):
            stack.extend((v, str(k)) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((v, key) for v in reversed(value))
    return "\n".join(strings + commands), commands


def _commands(text: str, found: Findings, commands: list[str]) -> None:
    for command in commands:
        for line in command.splitlines():
            _command(line.lstrip("$ "), found)
    for match in _PROMPT_LINE.finditer(text):
        _command(match.group(1), found)
    if " install" in text or " add " in text or " get " in text:
        for match in _INSTALL_PHRASE.finditer(text):  # "fix it with brew install x"
            _command(match.group(0), found)
    for match in _FENCE.finditer(text) if "```" in text else ():
        for line in match.group(1).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                _command(line.lstrip("$❯ "), found)
    for match in _RAN_PHRASE.finditer(text) if "`" in text else ():
        span = match.group(1).strip()
        if " " in span or span in KNOWN_TOOLS:  # "use `model_dump`" runs nothing
            _command(span, found)
    for match in _BACKTICK.finditer(text) if "`" in text else ():
        span = match.group(1).strip()
        first = span.split(" ", 1)[0]
        if " " in span and (first in KNOWN_TOOLS or first in _INSTALLERS):
            _command(span, found)


# --- 3. errors ----------------------------------------------------------------
_ERROR_NAME = re.compile(
    r"(?<![\w.])((?:[a-z_][\w]*\.)*)([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Exit|Interrupt"
    r"|Timeout|Failure|Fault|Unavailable|NotFound|Refused|Denied))\b"
)
_RAISED = re.compile(
    r"(?:\braise\s+|\bexcept\s*\(?\s*|\bFAILED\s+\S+\s+-\s+)((?:[a-z_]\w*\.)*)"
    r"([A-Z][a-z]+[A-Z]\w*)(?=[:(]|\s*(?:,|\)|\s+as\b|$))",
    re.MULTILINE,
)
_DOTTED_LINE_ERROR = re.compile(r"^((?:[a-z_]\w*\.)+)([A-Z][a-z]+[A-Z]\w*)(?=[:(])", re.MULTILINE)
#: Substrings without which no error-name pattern can match (cheap to test).
_ERROR_SUFFIXES = (
    "Error", "Exception", "Warning", "Exit", "Interrupt", "Timeout", "Failure", "Fault",
    "Unavailable", "NotFound", "Refused", "Denied",
)  # fmt: skip
_ERRNO = re.compile(
    r"\b(ECONNREFUSED|ECONNRESET|ENOENT|EACCES|EADDRINUSE|ETIMEDOUT|EPERM|EEXIST|ENOTFOUND"
    r"|EPIPE|ENOSPC|EMFILE|EHOSTUNREACH|ENOTDIR|EISDIR|ENOMEM|EAI_AGAIN)\b"
)
_RUST_ERROR = re.compile(
    r"\berror\[(E\d{4})\]|\berror (TS\d{4,5})\b|\bnpm (?:WARN|ERR!) (E[A-Z]{4,})\b"
)
_MAKE_ERROR = re.compile(r"^make: \*\*\* .*(Error \d+)$", re.MULTILINE)
_LINE_ERROR = re.compile(r"^((?:[a-z_]\w*\.)*)([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+): \S", re.MULTILINE)
_STATES = re.compile(
    r"\b(CrashLoopBackOff|ImagePullBackOff|ErrImagePull|OOMKilled|Segmentation fault"
    r"|SIGSEGV|SIGKILL|DeadlineExceeded|Evicted)\b"
)
_ERRNO_HINT = re.compile(r"E[A-Z]{4}")
_STATE_NEEDLES = ("BackOff", "ErrImage", "OOM", "Segmentation", "SIG", "Deadline", "Evicted")
_TRACEBACK_LAST = re.compile(r"^((?:[a-z_]\w*\.)*)([A-Z]\w+): ", re.MULTILINE)


_JVM_ROOTS = frozenset({"java", "javax", "kotlin", "scala", "android", "com", "org", "net"})


def _errors(text: str, found: Findings) -> None:
    # Each pattern runs only where a substring it needs occurs: most chunks
    # name no error, and these patterns are tried at every position.
    named = any(suffix in text for suffix in _ERROR_SUFFIXES)
    for match in _ERROR_NAME.finditer(text) if named else ():
        found.add(match.group(2), "error", "error name")
        prefix = match.group(1).rstrip(".")
        if prefix.split(".", 1)[0] in _JVM_ROOTS:
            found.add(prefix, "module", "error module")
        elif prefix:  # requests.exceptions.ReadTimeout: the package raised it
            _python_module(prefix, found, "error module")
    if "raise" in text or "except" in text or "FAILED" in text:
        for match in _RAISED.finditer(text):
            found.add(match.group(2), "error", "raised")
    for match in _DOTTED_LINE_ERROR.finditer(text):
        found.add(match.group(2), "error", "raised")
    if "Traceback" in text or "Error" in text:
        for match in _TRACEBACK_LAST.finditer(text):
            if match.group(1) or "Traceback" in text:
                found.add(match.group(2), "error", "traceback")
    codes = []
    if "E" in text and _ERRNO_HINT.search(text):
        codes.append(_ERRNO)
    if any(word in text for word in _STATE_NEEDLES):
        codes.append(_STATES)
    if "error" in text or "npm " in text:
        codes.append(_RUST_ERROR)
    if "make: " in text:
        codes.append(_MAKE_ERROR)
    for pattern in codes:
        for match in pattern.finditer(text):
            code = next(g for g in match.groups() if g)
            found.add(code, "error", "error code")
    for match in _LINE_ERROR.finditer(text):
        found.add(match.group(2), "error", "error line")


# --- 4. imports and manifests ------------------------------------------------------
_PY_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)",  # noqa: E501
    re.MULTILINE,
)
#: ``os.getenv(``, ``datetime.datetime.now(``: a standard-library module used.
_STDLIB_CALL = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\.[A-Za-z_][\w.]*\(")
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.MULTILINE)
_JS_IMPORT = re.compile(
    # Bounded repeats: "import import import ..." must not make it quadratic.
    r"(?:\bimport\s+(?:type\s+)?(?:[\w*{}\s,$]{1,300}?\s+from\s+)?|\brequire\(\s*|\bimport\(\s*"
    r"|^\s*export\s+[\w*{}\s,]{1,300}?\s+from\s+)['\"]([^'\"\s]+)['\"]",
    re.MULTILINE,
)
_RUST_USE = re.compile(r"^[ \t]*(?:pub\s+)?use\s+(\w+)::|\bextern\s+crate\s+(\w+)", re.MULTILINE)
_GO_IMPORT = re.compile(
    r"^[ \t]*(?:import[ \t]+)?(?:\w+[ \t]+)?\"([\w.-]+(?:/[\w.-]+)+|[a-z]+)\"[ \t]*$", re.MULTILINE
)
_REQUIREMENT = re.compile(
    r"^[ \t]*([A-Za-z][\w.-]*)(?:\[[\w,\s-]*\])?[ \t]*(==|>=|<=|~=|!=|>|<)[ \t]*([\w.*+-]+)"
    r"(?:[ \t]*,[ \t]*[<>=!~]=?[ \t]*[\w.*+-]+)*[ \t]*(?:;.*|#.*)?$",
    re.MULTILINE,
)
_QUOTED_REQUIREMENT = re.compile(
    r"^[ \t]*\"([A-Za-z][\w.-]*)(?:\[[^\]]*\])?[ \t]*(?:(==|>=|<=|~=|!=|>|<)[ \t]*([\w.*+-]+)[^\"]*)?\",?[ \t]*$",  # noqa: E501
    re.MULTILINE,
)
_PACKAGE_JSON_DEP = re.compile(
    r"^[ \t]*\"(@?[\w.-]+(?:/[\w.-]+)?)\"[ \t]*:[ \t]*\"([~^>=<]*)(\d+(?:\.[\dx*]+)*[\w.-]*)\",?[ \t]*$",  # noqa: E501
    re.MULTILINE,
)
_TOML_SECTION = re.compile(r"^\[([\w.-]+)\][ \t]*$", re.MULTILINE)
_TOML_DEP = re.compile(r"^([A-Za-z][\w-]*)[ \t]*=[ \t]*(?:\"([^\"]*)\"|\{)", re.MULTILINE)
_GO_REQUIRE = re.compile(
    r"^[ \t]*(?:require[ \t]+)?([\w.-]+\.[a-z]{2,}/[\w./-]+)[ \t]+(v\d[\w.+-]*)", re.MULTILINE
)
_SITE_PACKAGES = re.compile(
    r"(?:site-packages|dist-packages|node_modules)/(@[\w.-]+/[\w.-]+|[\w.-]+)/"
)
_CARGO_COMPILING = re.compile(
    r"^[ \t]*(?:Compiling|Downloaded|Checking)[ \t]+([\w-]+)[ \t]+(v\d+\.\d+[\w.+-]*)", re.MULTILINE
)
_GO_OUTPUT = re.compile(
    r"^go: (?:upgraded|downgraded|added|downloading|finding)[ \t]+(\S+)", re.MULTILINE
)
_PIP_INSTALLED = re.compile(r"^Successfully installed (.+)$", re.MULTILINE)
_PIP_COLLECTING = re.compile(
    r"^(?:Collecting|Requirement already satisfied:|Downloading)[ \t]+([A-Za-z][\w.-]*)(?:\[[^\]]*\])?(?:==([\w.]+))?",  # noqa: E501
    re.MULTILINE,
)
_NPM_AT = re.compile(r"(?<![\w/.@-])(@[\w.-]+/[\w.-]+|[a-z][\w.-]*)@(\d+\.\d+\.\d+[\w.+-]*)\b")
_MANIFEST_NOT_DEPS = frozenset(
    {"name", "version", "main", "node", "npm", "description", "license", "type", "module",
     "private", "author", "python", "requires-python", "edition", "rust-version"}
)  # fmt: skip


def _python_module(dotted: str, found: Findings, keyword: str) -> None:
    dotted = dotted.strip(".")
    if not dotted or not re.match(r"^[A-Za-z_]\w*(?:\.\w+)*$", dotted):
        return
    top = dotted.split(".", 1)[0]
    if top in PYTHON_STDLIB:
        found.add(dotted, "module", keyword)
        return
    found.add(top, "package", keyword)
    if "." in dotted:
        found.add(dotted, "module", keyword)


def _js_module(spec: str, found: Findings) -> None:
    if spec.startswith((".", "/", "~", "http")):
        return
    if spec.startswith("node:") or spec.split("/", 1)[0] in NODE_BUILTINS:
        found.add(spec, "module", "import")
        return
    parts = spec.split("/")
    name = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
    if re.match(r"^@?[a-z0-9][\w.-]*(?:/[\w.-]+)?$", name):
        found.add(name, "package", "import")


def _imports(text: str, found: Findings) -> None:
    # Each pattern runs only where a word it needs occurs (most chunks hold
    # no code): the checks are substring searches, far cheaper than a scan.
    if "import" in text:
        for match in _PY_IMPORT.finditer(text):
            for part in match.group(1).split(","):
                _python_module(part.split()[0], found, "import")
        for match in _PY_FROM.finditer(text):
            _python_module(match.group(1), found, "import")
    if "import" in text or "require" in text or "export" in text:
        for match in _JS_IMPORT.finditer(text):
            _js_module(match.group(1), found)
    if "use " in text or "extern crate" in text:
        for match in _RUST_USE.finditer(text):
            crate = match.group(1) or match.group(2)
            if crate not in RUST_ROOTS:
                found.add(crate, "package", "use")
    if "import" in text and ('"' in text):
        in_block = "import (" in text or 'import "' in text
        if in_block:
            for match in _GO_IMPORT.finditer(text):
                path = match.group(1)
                kind = "package" if "." in path.split("/", 1)[0] else "module"
                found.add(path, kind, "import")
    for match in _STDLIB_CALL.finditer(text) if "(" in text else ():
        if match.group(1) in PYTHON_STDLIB:
            found.add(match.group(1), "module", "call")
    if "packages/" in text or "node_modules/" in text:
        for match in _SITE_PACKAGES.finditer(text):
            found.add(match.group(1).lower(), "package", "installed path")


def _manifests(text: str, found: Findings) -> None:
    requirements = any(op in text for op in ("=", "<", ">"))
    for match in _REQUIREMENT.finditer(text) if requirements else ():
        name = match.group(1).lower()
        if name in _MANIFEST_NOT_DEPS:
            continue
        found.add(name, "package", "requirement")
        if match.group(2) == "==" and _VERSIONISH.match(match.group(3)):
            found.add(f"{name} {match.group(3)}", "version", "requirement")
    if "dependencies" in text or "requires" in text:
        for match in _QUOTED_REQUIREMENT.finditer(text):
            name = match.group(1).lower()
            if name not in _MANIFEST_NOT_DEPS:
                found.add(name, "package", "manifest")
                if match.group(2) == "==" and match.group(3):
                    found.add(f"{name} {match.group(3)}", "version", "manifest")
    if '"dependencies"' in text or '"devDependencies"' in text or "Dependencies" in text:
        for match in _PACKAGE_JSON_DEP.finditer(text):
            name = match.group(1)
            if name in _MANIFEST_NOT_DEPS:
                continue
            found.add(name, "package", "package.json")
            if not match.group(2) and _VERSIONISH.match(match.group(3)):
                found.add(f"{name} {match.group(3)}", "version", "package.json")
    sections = list(_TOML_SECTION.finditer(text)) if "dependencies]" in text else []
    for i, section in enumerate(sections):
        if not section.group(1).endswith("dependencies"):
            continue
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        for match in _TOML_DEP.finditer(text, section.end(), end):
            if match.group(1) not in _MANIFEST_NOT_DEPS:
                found.add(
                    match.group(1), "package", "Cargo.toml" if "=" in match.group(0) else "manifest"
                )
    if "require" in text or "module " in text:
        for match in _GO_REQUIRE.finditer(text):
            found.add(match.group(1), "package", "go.mod")
    cargo = "Compiling" in text or "Downloaded" in text or "Checking" in text
    for match in _CARGO_COMPILING.finditer(text) if cargo else ():
        found.add(match.group(1), "package", "cargo output")
        found.add(f"{match.group(1)} {match.group(2)}", "version", "cargo output")
    if "go: " in text:
        for match in _GO_OUTPUT.finditer(text):
            found.add(match.group(1), "package", "go output")
            found.add("go", "tool", "go output")
    for match in _PIP_INSTALLED.finditer(text) if "Successfully" in text else ():
        for item in match.group(1).split():
            name, _, version = item.rpartition("-")
            if name and _VERSIONISH.match(version):
                found.add(name.lower(), "package", "pip output")
                found.add(f"{name.lower()} {version}", "version", "pip output")
    pip = "Collecting" in text or "Requirement" in text or "Downloading" in text
    for match in _PIP_COLLECTING.finditer(text) if pip else ():
        name = match.group(1)
        if name.endswith((".whl", ".tar", ".zip")):  # Downloading x-1.2-py3-none-any.whl
            name = name.split("-", 1)[0]
        found.add(name.lower(), "package", "pip output")
    for match in _NPM_AT.finditer(text) if "@" in text else ():
        name = match.group(1)
        if name.rsplit(".", 1)[-1] in FILE_EXTENSIONS:
            continue
        found.add(name, "package", "name@version")
        found.add(f"{name} {match.group(2)}", "version", "name@version")


# --- 5. files ------------------------------------------------------------------------
_TRACE_FILE = re.compile(r"File \"([^\"\n]+)\", line \d+")
_PATH = re.compile(
    r"(?<![\w.@:/-])((?:~|\.{1,2})?/?(?:[\w@+-][\w.@+-]*/)+[\w.@+-]*[\w+-])(?![\w/])"
)
_BARE_FILE = re.compile(r"(?<![\w./@$-])(\.?[\w-]+(?:\.[\w-]+)*\.([A-Za-z0-9]{1,11}))(?![\w/(-])")
_DOTFILE = re.compile(
    r"(\.(?<![\w./-]\.)(?:env(?:\.[\w-]+)?|gitignore|dockerignore|npmrc|bashrc|zshrc|profile|editorconfig|pre-commit-config\.yaml))(?![\w/-])"
)
_PLAIN_KNOWN_NAMES = tuple(n for n in KNOWN_FILENAMES if not n.startswith("."))
_KNOWN_NAME = re.compile(
    r"(?<![\w./-])("
    + "|".join(
        sorted(
            (re.escape(n) for n in KNOWN_FILENAMES if not n.startswith(".")), key=len, reverse=True
        )
    )
    + r")(?![\w./-])"
)


def _is_file_name(name: str) -> bool:
    if name in KNOWN_FILENAMES:
        return True
    stem, dot, ext = name.rpartition(".")
    return bool(dot and stem and stem != "." and ext.lower() in FILE_EXTENSIONS)


def _add_file(path: str, found: Findings, keyword: str) -> None:
    path = path.rstrip(".,:;")
    if path.startswith("./"):
        path = path[2:]
    found.add(path, "file", keyword)
    if "/" in path:
        base = path.rsplit("/", 1)[-1]
        if base:
            found.add(base, "file", keyword)


#: An extension: the scan starts at a literal '.', which the regex engine
#: finds fast, and only then looks back for the name (see _bare_names).
_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,11})\b(?![/(-])")
_NAME_BEFORE = re.compile(r"\.?[\w-]+(?:\.[\w-]+)*\Z")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")


def _before(
    text: str, end: int, floor: int, chars: frozenset[str], pattern: re.Pattern[str]
) -> int | None:
    """Where the longest match of ``pattern`` (anchored at ``\\Z``) ending at
    ``end`` starts, or None. The run of ``chars`` before ``end`` is walked back
    first: searching a window with the pattern would try every position."""
    start = end
    floor = max(floor, end - 200)
    while start > floor and text[start - 1] in chars:
        start -= 1
    if start == end:
        return None
    if pattern.fullmatch(text[start:end]):  # \Z matches at the end of the slice
        return start
    found = pattern.search(text, start, end)
    return found.start() if found else None


def _bare_names(text: str, accept: Callable[[str], bool]) -> list[tuple[int, int]]:
    """Spans of file names (``name.ext``, not inside a path or an address)
    that ``accept`` takes; the same names as a regex scanning every position
    for ``name.ext`` would find, at a fraction of the cost."""
    spans: list[tuple[int, int]] = []
    last = 0
    for match in _EXTENSION.finditer(text):
        if match.group(1).lower() not in FILE_EXTENSIONS or match.start() < last:
            continue
        start = _before(text, match.start(), last, _NAME_CHARS, _NAME_BEFORE)
        if start is None:
            continue
        if (start > 0 and text[start - 1] in "./@$-") or (start > 0 and text[start - 1].isalnum()):
            continue
        if accept(text[start : match.end()]):
            spans.append((start, match.end()))
            last = match.end()
    return spans


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts += [text[at:start], " " * (end - start)]
        at = end
    return "".join([*parts, text[at:]])


def _files(text: str, found: Findings) -> str:
    for match in _TRACE_FILE.finditer(text):
        if _is_file_name(match.group(1).rsplit("/", 1)[-1]):
            _add_file(match.group(1), found, "traceback")

    def path(match: re.Match[str]) -> str:
        candidate = match.group(1).rstrip(".")
        if _is_file_name(candidate.rsplit("/", 1)[-1]):
            _add_file(candidate, found, "path")
            return " " * len(match.group(0))
        return match.group(0)

    def bare(name: str) -> bool:
        if name[0].isupper() and name.endswith(".js") and name.count(".") == 1:
            return False  # Node.js, Vue.js: products
        known = found.by_key.get(name.casefold())
        if known is not None and known.entity_type in ("module", "package", "host"):
            return False  # an imported module.db is no file
        if _is_file_name(name) and not name[0].isdigit():
            _add_file(name, found, "file name")
            return True
        return False

    if "/" in text:
        text = _PATH.sub(path, text)
    text = _blank_spans(text, _bare_names(text, bare))
    patterns = [_DOTFILE]
    if any(name in text for name in _PLAIN_KNOWN_NAMES):
        patterns.append(_KNOWN_NAME)
    for pattern in patterns:
        for match in pattern.finditer(text):
            _add_file(match.group(1), found, "file name")
    return text


# --- 6. hosts, environment variables, issues, versions, identifiers -------------------
_HOST = re.compile(
    r"(?<![\w.@/-])((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+([a-z]{2,}))(?::(\d{2,5}))?(?![\w-]|\.[\w-])"
)
_TLD = re.compile(r"\.([a-z]{2,})(?::(\d{2,5}))?(?![\w-]|\.[\w-])")
_LABELS_BEFORE = re.compile(
    r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\Z"
)
_IP = re.compile(
    r"(?<![\w.])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?::\d{2,5})?(?![\w.])"
)
_LOCALHOST = re.compile(r"\blocalhost\b")
_DIGIT_DOT_DIGIT = re.compile(r"\d\.\d")
_DOTTED_DIGITS = re.compile(r"\d\.\d{1,3}\.\d")
_ENV_REFS = (
    re.compile(r"\$\{?([A-Z_][A-Z0-9_]*)\}?"),
    re.compile(
        r"(?:os\.environ(?:\.get)?\s*[\[(]\s*|\bgetenv\(\s*|env::var\(\s*|process\.env\[\s*"
        r"|ENV\[\s*)[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']"
    ),
    re.compile(r"\bprocess\.env\.([A-Za-z_]\w*)"),
    re.compile(
        r"^[ \t]*(?:export[ \t]+|-[ \t]+)?([A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]{4,})=", re.MULTILINE
    ),
    re.compile(r"^[ \t]*(?:-[ \t]+)?([A-Z][A-Z0-9]*_[A-Z0-9_]+):[ \t]", re.MULTILINE),
    re.compile(r"\b(?:-e|--env)[ \t]+([A-Z][A-Z0-9_]*)="),
    re.compile(r"\bexport[ \t]+([A-Za-z_][A-Za-z0-9_]*)="),
)
_CODE_MARKS = ("=", "{", "}", "()", ");")
_SCREAMING = re.compile(r"(?<![\w.$/-])([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?![\w/-]|\.\w)")
#: Per pattern of _ENV_REFS, substrings one of which it needs (empty: none).
_ENV_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("$",),
    ("env", "ENV"),
    ("process.env",),
    ("=",),
    (":",),
    ("-e", "--env"),
    ("export",),
)
_ISSUE_REPO = re.compile(r"(?<![\w/])([\w.-]+/[\w.-]+)#(\d{1,6})\b")
_ISSUE_HASH = re.compile(r"(?<![\w&#/'\"])#(\d{1,5})\b(?![\w-])")
_ISSUE_WORD = re.compile(r"\b(?:PR|[Pp]ull [Rr]equest|[Ii]ssue|[Tt]icket)\s+#?(\d{1,6})\b")
_ISSUE_KEY = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,9})-(\d{1,6})(?![\w-])")
_TAG = re.compile(r"(?<![\w.-])(v\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?)(?![\w.-]*\w)")
_NAMED_VERSION = re.compile(
    r"(?<![\w.-])([A-Za-z][\w.+-]*?)[ \t]+(?:from[ \t]+)?v?(\d+\.\d+(?:\.\d+)?(?:[-.]?(?:rc|a|b|dev|post)\d*)?)"  # noqa: E501
    r"(?:[ \t]+(?:to|->|→)[ \t]+v?(\d+\.\d+(?:\.\d+)?))?(?![\w.])"
)
_DEFINED = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:pub[ \t]+)?(?:async[ \t]+)?(?:def|class|fn|func|function|interface|struct|enum|trait)[ \t]+([A-Za-z_]\w*)",  # noqa: E501
    re.MULTILINE,
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?$")


def _hosts(text: str, found: Findings) -> None:
    # Found from the end: a top-level domain (or a port), then the labels
    # before it; scanning every position for a dotted name costs far more.
    last = 0
    for match in _TLD.finditer(text):
        if match.start() < last or not (match.group(1) in HOST_TLDS or match.group(2)):
            continue
        start = _before(text, match.start(), last, _HOST_CHARS, _LABELS_BEFORE)
        if start is None:
            continue
        if start > 0 and (text[start - 1] in "._@/-" or text[start - 1].isalnum()):
            continue
        found.add(text[start : match.end(1)], "host", "host")
        last = match.end()
    for match in _IP.finditer(text) if _DOTTED_DIGITS.search(text) else ():
        if not match.group(1).startswith("0."):
            found.add(match.group(1), "host", "ip")
    if _LOCALHOST.search(text):
        found.add("localhost", "host", "host")


def _env_vars(text: str, found: Findings) -> None:
    if "_" in text:
        # SCREAMING_SNAKE in a line of prose (no code punctuation) names a
        # setting: "rotate the SMTP_PASSWORD", "set REQUESTS_CA_BUNDLE".
        for line in text.splitlines():
            if "_" in line and not any(c in line for c in _CODE_MARKS):
                for match in _SCREAMING.finditer(line):
                    found.add(match.group(1), "env_var", "environment")
    for pattern, needles in zip(_ENV_REFS, _ENV_NEEDLES, strict=True):
        if needles and not any(n in text for n in needles):
            continue
        for match in pattern.finditer(text):
            name = match.group(1)
            if name not in ("REDACTED",):
                found.add(name, "env_var", "environment")


def _issues(text: str, found: Findings) -> None:
    patterns = []
    if "#" in text:
        for match in _ISSUE_REPO.finditer(text):
            found.add(f"{match.group(1)}#{match.group(2)}", "issue", "issue ref")
        text = _ISSUE_REPO.sub(lambda m: " " * len(m.group(0)), text)
        patterns.append(_ISSUE_HASH)
    if any(word in text for word in ("PR", "ull", "ssue", "icket")):
        patterns.append(_ISSUE_WORD)
    for pattern in patterns:
        for match in pattern.finditer(text):
            found.add(f"#{match.group(1)}", "issue", "issue ref")
    for match in _ISSUE_KEY.finditer(text):
        if match.group(1) not in NOT_ISSUE_KEYS and not match.group(1)[-1].isdigit():
            found.add(f"{match.group(1)}-{match.group(2)}", "issue", "issue key")


def _versions(text: str, found: Findings) -> None:
    if not _DIGIT_DOT_DIGIT.search(text):
        return  # every version pattern needs one
    for match in _TAG.finditer(text):
        found.add(match.group(1), "version", "tag")
    for match in _NAMED_VERSION.finditer(text):
        name = match.group(1)
        known = found.by_key.get(name.casefold())
        if known is not None and known.entity_type in ("package", "tool", "product"):
            name = known.name
        elif name in KNOWN_PRODUCTS or name in KNOWN_TOOLS:
            pass
        else:
            continue
        found.add(f"{name} {match.group(2)}", "version", "version")
        if match.group(3):
            found.add(f"{name} {match.group(3)}", "version", "version")


def _identifiers(text: str, found: Findings) -> None:
    for match in _BACKTICK.finditer(text):
        span = match.group(1).strip()
        if _IDENTIFIER.match(span) and not found.has(span.removesuffix("()")):
            name = span.removesuffix("()")
            if len(name) > 1 and not name.isdigit():
                found.add(name, "identifier", "backticks")
    for match in _DEFINED.finditer(text):
        found.add(match.group(1), "identifier", "definition")


# --- 7. word lists for prose ---------------------------------------------------------
#: Known tools that are also English words: counted only when run.
_AMBIGUOUS_TOOLS = frozenset(
    {"make", "go", "just", "kind", "perf", "ab", "az", "node", "apt", "test", "wrk", "k6",
     "python", "python3", "aws", "packer", "black", "sed", "awk", "yq", "jq", "vim", "uv"}
)  # fmt: skip
#: A word of prose that may be a listed tool, package or product: not part
#: of a path, an address, a variable or a quoted string.
_PROSE_WORD = re.compile(r"(?<![\w./@$-])([A-Za-z][\w.+-]*)(?![\w/@])")
_PROSE_TOOLS = KNOWN_TOOLS - _AMBIGUOUS_TOOLS


def _word_lists(text: str, found: Findings) -> None:
    # One pass over the words and set look-ups: an alternation of a few
    # hundred names would be tried at every position of the text.
    for match in _PROSE_WORD.finditer(text):
        start, end = match.span()
        if start and text[start - 1] in "\"'" and text[end : end + 1] in ('"', "'"):
            continue  # a quoted key or value ("vitest": "^1.6.0") is no prose
        word = match.group(1).rstrip(".-+")
        if word in _PROSE_TOOLS:
            found.add_weak(word, "tool", "named tool")
        elif word in KNOWN_PRODUCTS:
            kind = "organization" if word in KNOWN_ORGANIZATIONS else "product"
            found.add_weak(word, kind, "named product")
        elif word in KNOWN_PACKAGES or (word.istitle() and word.lower() in KNOWN_PACKAGES):
            found.add_weak(word.lower(), "package", "named package")


def extract_patterns(text: str) -> Findings:
    """Every entity the patterns find in ``text`` (a redacted chunk)."""
    found = Findings()
    unwrapped = _json_strings(text)
    commands: list[str] = []
    if unwrapped is not None:
        text, commands = unwrapped
    text = _urls(text, found)
    _commands(text, found, commands)
    _errors(text, found)
    _imports(text, found)
    _manifests(text, found)
    rest = _files(text, found)
    _hosts(rest, found)
    _env_vars(rest, found)
    _issues(rest, found)
    _versions(rest, found)
    _identifiers(text, found)
    _word_lists(rest, found)
    return found
