"""The secret redactor: every shape it promises, and prose it must leave alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessions_graph.reconcile.chunking import normalise
from sessions_graph.redact import redact


@pytest.mark.parametrize(
    ("text", "secret", "marker"),
    [
        ("key sk-proj-Abcdefghijklmnopqrstuvwx123", "sk-proj-Abcdef", "openai_api_key"),
        ("key sk-ant-api03-abcdefghijklmnopqrstuv", "sk-ant-api03", "anthropic_api_key"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc", "github_token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijkl", "github_pat_11", "github_token"),
        ("xoxb-12345678901-abcdefghijklmn", "xoxb-1234", "slack_token"),
        ("AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSy", "google_api_key"),
        ("id AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "aws_secret_key",
        ),
        ('curl -H "Authorization: Bearer abc.def.ghi123"', "abc.def.ghi123", "authorization"),
        ("token is Bearer eyAbc123456789xyz", "eyAbc123456789xyz", "bearer_token"),
        ("postgres://admin:hunter2@db:5432/app", "hunter2", "url_password"),
        ("export SERVICE_TOKEN=tok_live_12345", "tok_live_12345", "token"),
        ("DB_PASSWORD: correct-horse", "correct-horse", "password"),
        ("CLIENT_SECRET=abcdef", "abcdef", "secret"),
        ('{"stripe_api_key": "rk_live_abc123"}', "rk_live_abc123", "secret"),
        ("MY_API_KEY=plainvalue", "plainvalue", "secret"),
    ],
)
def test_each_secret_shape_becomes_a_marker(text: str, secret: str, marker: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{marker}]" in out


def test_private_key_blocks_go_whole_even_when_cut_off() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBase64Material\n-----END EC PRIVATE KEY-----"
    assert redact(f"before\n{block}\nafter") == "before\n[REDACTED:private_key]\nafter"
    assert redact("-----BEGIN PRIVATE KEY-----\nMIIEvQ truncated") == "[REDACTED:private_key]"


def test_url_keeps_user_and_host() -> None:
    assert redact("redis://cache:s3cret@redis.local:6379/0") == (
        "redis://cache:[REDACTED:url_password]@redis.local:6379/0"
    )


@pytest.mark.parametrize(
    "text",
    [
        "Use bearer authentication for the API.",
        "PWD=/home/alice\nOLDPWD=/tmp",
        "max_tokens: 4096",
        "The password reset flow sends an email.",
        "https://example.com/path?q=1",
        "Memgraph listens on bolt://localhost:7687",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


# (tool output as the pipeline sees it, the secret that must go, the context that must stay)
REAL_WORLD_SECRETS = [
    # environment variables
    ("DB_PASS=hunter2xyz\nHOME=/root", "hunter2xyz", "HOME=/root"),
    ("STRIPE_KEY=sk_live_51HabcdefghijKLMNOP", "51HabcdefghijKLMNOP", "STRIPE_KEY="),
    ("paid with sk_live_51HabcdefghijKLMNOP today", "51Habcdefghij", "paid with"),
    ("restricted rk_live_51HabcdefghijKLMNOP key", "51Habcdefghij", "restricted"),
    ("GPG_PASSPHRASE=correcthorsebattery make sign", "correcthorse", "make sign"),
    ("TWILIO_AUTH=SK0123456789abcdef0123456789abcdef ok", "0123456789abcdef", " ok"),
    ("TWILIO_AUTH=SKshortButSecret ok", "SKshortButSecret", " ok"),
    ("export SESSIONID=abc123def456 done", "abc123def456", "done"),
    ('TOKEN="$(cat /run/secrets/t)x9"', "cat /run/secrets", "TOKEN="),
    # each key word the docs list: access key, private key, credentials
    (
        "MINIO_ACCESS_KEY=minioadmin\nMINIO_SECRET_KEY=minioadmin",
        "minioadmin",
        "MINIO_SECRET_KEY=",
    ),
    (
        "JWT_PRIVATE_KEY='MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu'",
        "MIIBOgIBAAJBAKj34Gkx",
        "JWT_PRIVATE_KEY=",
    ),
    (
        "GOOGLE_CREDENTIALS=eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0= terraform plan",
        "eyJ0eXBlIjoic2VydmljZV9hY2NvdW50In0",
        "terraform plan",
    ),
    # a value that starts with a word forms use ("changed", "reset") is still a password
    ("MYSQL_PASSWORD=Changed2024!\nMYSQL_USER=app", "Changed2024!", "MYSQL_USER=app"),
    # ... and so is one that only starts with such a word
    ("MYSQL_PASSWORD=Changed1!\nMYSQL_USER=app", "Changed1!", "MYSQL_USER=app"),
    ("DB_PASSWORD=reset_me_please\nDB_USER=app", "reset_me_please", "DB_USER=app"),
    # command lines
    ("$ curl -u admin:hunter2xyz https://api.example.com", "hunter2xyz", "https://api.example.com"),
    ("curl --user deploy:Pa55w0rd! -X POST https://x.io", "Pa55w0rd!", "-X POST"),
    ("curl -s \\\n-u deploy:Pa55w0rd! https://x.io", "Pa55w0rd!", "https://x.io"),
    # "curl" after another command's -u on the same line
    (
        "docker run --rm -u 1000:1000 app:latest && curl -u admin:Pa55w0rd! https://x.io",
        "Pa55w0rd!",
        "-u 1000:1000 app:latest",
    ),
    # two passwords on one long command line: the second is far from "curl"
    (
        "curl --retry 3 --retry-delay 2 --max-time 30 -u deploy:Pa55w0rd!"
        " --proxy-user squid:Pr0xyPa55 https://x.io",
        "Pr0xyPa55",
        "https://x.io",
    ),
    ("docker login --password s3cr3tpw registry.io", "s3cr3tpw", "registry.io"),
    ("docker login -u bob -p s3cr3t registry.io", "s3cr3t", "registry.io"),
    ("mysql -u root -phunter2xyz shop", "hunter2xyz", "shop"),
    ("sshpass -p hunter2xyz ssh deploy@host", "hunter2xyz", "ssh deploy@host"),
    ("openssl enc -aes256 -pass pass:hunter2xyz -in f", "hunter2xyz", "-in f"),
    ("gh auth login --token abc123def456 --hostname x", "abc123def456", "--hostname x"),
    ("oauth2-proxy --client-secret=Zq8kd93xQw --provider=github", "Zq8kd93xQw", "--provider"),
    (
        "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENG",
        "wJalrXUtnFEMI",
        "aws configure",
    ),
    # config files
    ("machine api.io login u password 8f2d9a77e1", "8f2d9a77e1", "machine api.io login u"),
    ("machine api.io\nlogin u\npassword 8f2d9a77e1", "8f2d9a77e1", "login u"),
    ('{"user": "bob", "pass": "Sup3rS3cret!"}', "Sup3rS3cret!", '"user": "bob"'),
    (
        "AccountName=acct;AccountKey=abc+Def/ghi123==;EndpointSuffix=core.windows.net",
        "abc+Def/ghi123==",
        "EndpointSuffix=core.windows.net",
    ),
    ("Endpoint=sb://x.net/;SharedAccessKey=abcDEF123=", "abcDEF123=", "Endpoint=sb://x.net/"),
    ("Blob=https://a.net/;SharedAccessSignature=sv=2020&sig=abcDEF%2B1", "abcDEF%2B1", "Blob="),
    ("[db]\npassword = hunter2xyz\nhost = db", "hunter2xyz", "host = db"),
    ("smtp:\n  password: 'x7#kQ!'\n  port: 25", "x7#kQ!", "port: 25"),
    # quoted values end at their closing quote, not at the first space or comma
    ('{"password": "correct horse battery staple"}', "horse battery staple", '{"password": "'),
    ('{"password": "ab,cdefgh"}', "cdefgh", '{"password": "'),
    ("PGPASSWORD='a b c' psql -h db", "a b c", "psql -h db"),
    ('conf = {"password": "pa\\"ss word"}', "ss word", "conf = "),
    # key blocks
    (
        "gpg -a --export-secret-keys\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGxyz\n=abcd\n"
        "-----END PGP PRIVATE KEY BLOCK-----\ndone",
        "lQOYBGxyz",
        "gpg -a --export-secret-keys",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
        "b3Blbn",
        "",
    ),
    # provider token shapes
    (
        "git clone https://oauth2:glpat-abcdefghij1234567890@gitlab.com/x",
        "glpat-abcdefghij",
        "gitlab.com/x",
    ),
    ("HF token hf_abcdefghijklmnopqrstuvwxyz1234 set", "hf_abcdefghij", "HF token"),
    (
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdef",
        "registry",
    ),
    (
        "bot xoxb-12345678901-abcdefghijklmn and user xoxp-12345678901-abcdefghij",
        "12345678901",
        "and user",
    ),
    (
        "gho_abcdefghijklmnopqrstuvwxyz0123 ghs_abcdefghijklmnopqrstuvwxyz0123 end",
        "abcdefghijklmnop",
        " end",
    ),
    ("key sk-ant-api03-abcdefghijklmnopqrstuv end", "abcdefghijklmnop", " end"),
    (
        "SENDGRID SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "abcdefghijklmn",
        "SENDGRID",
    ),
    (
        "mail via SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
        "ABCDEF",
        "mail via",
    ),
    # URLs
    (
        "POST https://hooks.slack.com/services/T0001/B0001/XXXXabcd1234",
        "XXXXabcd1234",
        "hooks.slack.com",
    ),
    # a capital dotted I lower-cases to two characters: positions must not shift
    (
        "İzmir ekibi: https://hooks.slack.com/services/T0001/B0001/XXXXabcd1234",
        "XXXXabcd1234",
        "İzmir ekibi",
    ),
    (
        "https://discord.com/api/webhooks/123456789/abcDEF-xyz_987 ok",
        "abcDEF-xyz_987",
        "discord.com",
    ),
    ("GET https://maps.googleapis.com/x?key=abc123def&q=paris", "abc123def", "q=paris"),
    ("https://api.x.com/v1?user=bob&token=abc123def", "abc123def", "user=bob"),
    (
        "https://a.blob.core.windows.net/c/b?sv=2020-08-04&sig=abcDEF%2B123&se=2024",
        "abcDEF%2B123",
        "se=2024",
    ),
    ("https://x.com/cb?access_token=abc123def&state=xyz", "abc123def", "state=xyz"),
    ("https://x.com/cb#access_token=abc123def&type=bearer", "abc123def", "type=bearer"),
    ("redis://:s3cr3tP4ss@cache:6379/0", "s3cr3tP4ss", "@cache:6379/0"),
    ("mongodb+srv://admin:p@ssw0rd@cluster0.x.net/db", "ssw0rd", "admin:"),
    # HTTP headers
    ("< Set-Cookie: sessionid=abc123def; Path=/; HttpOnly", "abc123def", "Set-Cookie:"),
    ("> Cookie: session=abc123; csrftoken=zzz999yyy", "zzz999yyy", "> Cookie:"),
    ("> Authorization: Basic YTpi", "YTpi", "Authorization: Basic"),
    ("X-Api-Key: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "X-Api-Key:"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), REAL_WORLD_SECRETS)
def test_real_world_secrets_go_and_their_context_stays(text: str, secret: str, kept: str) -> None:
    out = redact(normalise(text))
    assert secret not in out
    assert kept in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        # prose and code that name a secret without holding one
        "the password field is required",
        "Password: required",
        "Please log in with your password, then rotate the token.",
        "def check_password(pw):",
        "def login(password: str, token: Optional[str] = None) -> bool:",
        "def connect(host: str, password: str|None = None) -> None:",
        "password: Optional[str] = None",
        "token = tokenizer.encode(text)",
        "self.password = password",
        "token = self.token",
        "api_key=api_key",
        "password = os.environ['DB_PASS']",
        "const apiKey = process.env.API_KEY;",
        "if password == expected:",
        "token := next(it)",
        "password_min_length=8",
        "token_count: 12",
        # references and placeholders
        'TOKEN="$GITHUB_TOKEN"',
        "password=${DB_PASS}",
        "api_key: <your-key-here>",
        # flags that are not followed by a secret
        "--password-file /path/to/pw",
        "docker login --password-stdin registry.io",
        "--token TOKEN   the API token",
        "--token string   Bearer token",
        "pass the --token flag",
        "mkdir -p /tmp/x && ssh -p 22 host",
        "git push -u origin main",
        "pip install --user requests",
        # names that end in something other than a secret word
        "KEY_LENGTH=32",
        "SORT_KEY=created_at",
        "primary_key: id",
        "keyword=value",
        "auth: true",
        "AUTH=none",
        # this store's own identifiers
        '"session_id": "3f2a9c1e-uuid-1234"',
        '"sessionId": "3f2a9c1e-uuid-1234"',
        "https://example.com/search?q=tokens&page=2",
        # a provider prefix inside a word ("sk-" of a branch name's "ask-")
        "git checkout -b feature/ask-before-deleting-branches",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent() -> None:
    once = redact("\n".join(text for text, _secret, _kept in REAL_WORLD_SECRETS))
    assert redact(once) == once


# -- secrets behind encodings and in config formats (tests/redact_probes.py) --

from redact_probes import ADVERSARIAL, PROBES  # noqa: E402

from sessions_graph.redact import redact_counted  # noqa: E402


@pytest.mark.parametrize(
    ("text", "secret"), [(t, s) for _, t, s in PROBES], ids=[d for d, _, _ in PROBES]
)
def test_probe_secrets_are_caught(text: str, secret: str) -> None:
    out, count = redact_counted(text)
    assert secret not in out
    assert count >= 1 and out.count("[REDACTED:") >= count


def test_a_secret_found_in_the_decoded_view_is_cut_from_the_raw_text() -> None:
    """The raw text keeps its escaping: a JSON tool call stays JSON, with only
    the secret replaced, and the neighbours of an escaped secret stay intact."""
    call = json.dumps(
        {"content": json.dumps({"user": "app", "password": "my pass phrase"}), "path": "c.json"}
    )
    out = redact(call)
    content = json.loads(json.loads(out)["content"])
    assert content == {"user": "app", "password": "[REDACTED:password]"}
    env_file = json.dumps({"content": "A=1\nDB_PASSWORD=lettersonly\nDEBUG=0\n"})
    assert json.loads(redact(env_file))["content"] == (
        "A=1\nDB_PASSWORD=[REDACTED:password]\nDEBUG=0\n"
    )
    coloured = "key: \x1b[1;31mAKIAIOSFODNN7EXAMPLE\x1b[0m done"
    assert redact(coloured) == "key: \x1b[1;31m[REDACTED:aws_access_key]\x1b[0m done"
    encoded = "next=%2Fcb%3Ftoken%3Dghp_abcdefghijklmnopqrstuvwxyz0123456789%26x%3D1"
    assert redact(encoded) == "next=%2Fcb%3Ftoken%3D[REDACTED:github_token]%26x%3D1"
    # Only decoding shows the query (each %XX read as hex), and the secret
    # begins with an encoded character (a base64 "/"), which goes with it.
    callback = "callback=https%3A%2F%2Fapp.io%2Fauth%3Ftoken%3D%2FaB3xYz9Qw%2BkLm&state=1"
    assert redact(callback) == (
        "callback=https%3A%2F%2Fapp.io%2Fauth%3Ftoken%3D[REDACTED:url_secret]&state=1"
    )
    # A key and its value joined by a \u escape (JSON written by a tool):
    # only the decoded text shows the assignment.
    escaped = '{"env": "DB_PASSWORD\\u003ds3cr3tpw1"}'
    assert redact(escaped) == '{"env": "DB_PASSWORD\\u003d[REDACTED:password]"}'
    # Colour codes where the text starts, on a later line, and right before
    # a key's last character (grep highlighting its match): cut exactly.
    assert redact(f"\x1b[1;32m{GHP}\x1b[0m is your new token") == (
        "\x1b[1;32m[REDACTED:github_token]\x1b[0m is your new token"
    )
    assert redact(f"build ok\nwarnings: 0\ncreated \x1b[1m{GHP}\n") == (
        "build ok\nwarnings: 0\ncreated \x1b[1m[REDACTED:github_token]\n"
    )
    grep = "config/prod.env:3:AKIAIOSFODNN7EXAMPL\x1b[01;31m\x1b[KE\x1b[m\x1b[K"
    assert redact(grep) == "config/prod.env:3:[REDACTED:aws_access_key]\x1b[m\x1b[K"
    # Coloured YAML (yq -C, bat): a name/value pair over two escaped lines.
    yaml = (
        "\x1b[34menv\x1b[0m:\n  - \x1b[34mname\x1b[0m: \x1b[32mAPI_TOKEN\x1b[0m\n"
        "    \x1b[34mvalue\x1b[0m: \x1b[32mlettersonlytoken\x1b[0m\n"
    )
    assert redact(yaml) == yaml.replace("lettersonlytoken", "[REDACTED:token]")
    # Secrets of two rules in one escaped stretch, all of them found.
    listing = f"\x1b[1m{GHP}\x1b[0m \x1b[1m{GHO}\x1b[0m {escaped}"
    assert redact_counted(listing) == (
        "\x1b[1m[REDACTED:github_token]\x1b[0m \x1b[1m[REDACTED:github_token]\x1b[0m"
        ' {"env": "DB_PASSWORD\\u003d[REDACTED:password]"}',
        3,
    )
    # A JSON file (with an escape after the password) written by a tool call.
    windows = json.dumps({"content": json.dumps({"password": "pass word", "dir": "C:\\tmp"})})
    assert json.loads(json.loads(redact(windows))["content"]) == {
        "password": "[REDACTED:password]",
        "dir": "C:\\tmp",
    }


GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
GHO = "gho_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    "text",
    [
        '{"url": "postgres://app:Sup3rS3cretPw\\u0040db.internal:5432/prod"}',
        "postgres://app:Sup3rS3cretPw%40db.internal:5432/prod",
    ],
    ids=["json-escaped @", "url-encoded @"],
)
def test_a_secret_that_only_its_escaped_end_shows_goes_to_its_last_character(text: str) -> None:
    """A URL's password is told by the ``@`` after it: escaped, only the
    decoded view shows it, and there the password ends before any escape.
    Mapped back to the raw text, the marker still reaches its last character."""
    out, count = redact_counted(text)
    assert count == 1 and "Pw" not in out and "S3cret" not in out
    assert out.startswith(text.split("Sup3r")[0] + "[REDACTED:url_password]")
    assert "db.internal:5432/prod" in out


def test_json_three_encodings_deep_is_read_at_its_own_depth() -> None:
    """A tool result showing a tool call that wrote a JSON file: the file's
    own escapes (a quote inside the password) are the password's, so the
    view decodes the two encodings around the file and no further."""
    result = json.dumps({"stdout": json.dumps({"content": json.dumps({"password": 'pa"ss word'})})})
    out = redact(result)
    assert "ss word" not in out
    assert json.loads(json.loads(json.loads(out)["stdout"])["content"]) == {
        "password": "[REDACTED:password]"
    }


#: Files a tool call writes whose password holds an escaped double quote (the
#: file's own escaping: JSON, a quoted .env value, a shell argument); the tool
#: call's JSON escapes it once more, so it reaches the redactor as ``\\\"``.
QUOTED_PASSWORD_FILES = [
    json.dumps({"user": "app", "password": 'pa"ss w0rd tail'}, indent=2),
    'APP_USER=app\nDB_PASSWORD="pa\\"ss w0rd tail"\n',
    'psql --host db --password "pa\\"ss w0rd tail" shop\n',
]


@pytest.mark.parametrize("content", QUOTED_PASSWORD_FILES, ids=["json", "env", "argument"])
def test_a_quote_inside_a_password_a_tool_call_writes_does_not_end_it(content: str) -> None:
    """The quote the file escapes is part of the password: its tail goes with
    it, and the call and the file stay what they were around the marker."""
    call = json.dumps({"file_path": "/srv/app/config", "content": content})
    out = redact(call)
    written = json.loads(out)["content"]
    assert "ss w0rd" not in written and "tail" not in written
    assert written == content.replace('pa\\"ss w0rd tail', "[REDACTED:password]")


def test_a_quote_inside_a_password_in_a_written_json_file_never_reaches_the_store(
    graph: SessionsGraph,
) -> None:
    graph.record_session_start("s-quote", user_id="alice")
    config = {"user": "app", "password": 'Zq"8kd93 tail-of-it'}
    call = json.dumps({"file_path": "config.json", "content": json.dumps(config)})
    graph.record_actions(
        "s-quote",
        [{"action_id": "w", "action_type": "tool_call", "tool_name": "Write", "text": call}],
    )
    (action,) = graph.get_actions("s-quote")
    assert "tail-of-it" not in action.text and "Zq" not in action.text
    assert json.loads(json.loads(action.text)["content"]) == {
        "user": "app",
        "password": "[REDACTED:password]",
    }


def test_where_a_rule_looks_reaches_every_line_and_every_hint() -> None:
    """A key that starts the second line of an output that opens with a blank
    line, a query parameter after a doubled ``&``, and a curl option on a
    line continued by a line holding only a backslash: each is looked for
    where it is (and the command before an uncontinued line is not its)."""
    assert redact("\napi_token: lettersonlytoken\n") == "\napi_token: [REDACTED:token]\n"
    sas = "GET https://x.blob.core.windows.net/c/f?sv=2022&&sig=abcDEF123xyz HTTP/1.1"
    assert redact(sas) == sas.replace("abcDEF123xyz", "[REDACTED:url_secret]")
    assert redact("ls\ncurl -u admin:Pa55w0rd! https://x.io") == (
        "ls\ncurl -u admin:[REDACTED:password] https://x.io"
    )
    continued = "curl -fsS https://x.io/health\n\\\n  -u 1000:1000 app"
    assert redact_counted(continued) == (continued, 0)


def test_an_unquoted_value_gives_back_the_closing_brackets_around_it() -> None:
    """However short the value: the brackets and commas after it close the
    code it sits in, and stay."""
    assert redact("connect(password=hunter2x))") == "connect(password=[REDACTED:password]))"
    assert redact("connect(token=x)),") == "connect(token=[REDACTED:token])),"


def test_a_line_continuation_at_the_end_of_a_cut_output_is_read() -> None:
    """Output that starts with a blank line and was cut after a ``\\``."""
    out = redact("\ncurl --fail \\\n  -u deploy:Pa55w0rd! \\")
    assert out == "\ncurl --fail \\\n  -u deploy:[REDACTED:password] \\"


@pytest.mark.parametrize(
    "text",
    [
        "Password: required\n",
        "token: Token\n",
        "    password: str\n",
        "auth: none\n",
        "Password: enter your password twice\n",
        "docker run -u 1000:1000 image",
        # The command an option belongs to must come before it on its line.
        "docker run -u 1000:1000 image\ncurl https://x.io",
        "curl -fsS https://x.io/health\ndocker run -u 1000:1000 image",
        "mysql -h db -P 3306 -u app shop",
        "redis-cli -h cache ping",
        '{"text": "the password field is required\\nand the token expires"}',
        "\x1b[1mPassword reset\x1b[0m sent",
        "GET /search?q=hello%20world%20token&page=2",
        "commit 3f2a9c1e4b5d6a7b8c9d0e1f2a3b4c5d6e7f8a9b AKIA in docs",
        "- name: LOG_LEVEL\n  value: debug\n",
        "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: api\n",
    ],
)
def test_decoded_and_yaml_look_alikes_are_left_alone(text: str) -> None:
    assert redact_counted(text) == (text, 0)


def test_redaction_of_the_probes_is_idempotent() -> None:
    once = redact("\n".join(text for _, text, _ in PROBES))
    assert redact_counted(once) == (once, 0)


def test_adversarial_texts_cost_linear_time(tmp_path: Path) -> None:
    """200,000 characters of each, in a child process with a generous bound
    (linear patterns need well under a second each; the speed itself is
    measured by bench/bench_redact.py, whose scaling ratios show linearity)."""
    script = tmp_path / "adversarial.py"
    script.write_text(
        "import json, sys\n"
        "from sessions_graph.redact import redact\n"
        "for unit in json.loads(sys.argv[1]):\n"
        "    text = (unit * (200_000 // len(unit) + 1))[:200_000]\n"
        "    redact(text)\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script), json.dumps(ADVERSARIAL)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]


# -- passwords on command lines (tests/redact_probes.py, COMMAND_LINES) --------

from redact_probes import CLI_PASSWORD, CLI_PROBES, COMMAND_LINES  # noqa: E402

from sessions_graph import SessionsGraph  # noqa: E402


def _command(call: str) -> str:
    """The command of a JSON tool call, or of the call a tool result shows."""
    data = json.loads(call)
    return _command(data["stdout"]) if "stdout" in data else data["command"]


@pytest.mark.parametrize(
    ("text", "secret"), [(t, s) for _, t, s in CLI_PROBES], ids=[d for d, _, _ in CLI_PROBES]
)
def test_command_line_passwords_go_and_tool_calls_stay_json(text: str, secret: str) -> None:
    out, count = redact_counted(text)
    assert secret not in out and count >= 1 and "[REDACTED:password]" in out
    if text.startswith("{"):  # a tool call: still JSON, its command readable
        command, typed = _command(out), _command(text)
    else:
        command, typed = out, text
    assert secret not in command
    assert command.split("=")[0].split()[0] == typed.split("=")[0].split()[0]
    assert redact_counted(out) == (out, 0)


def test_command_line_passwords_never_reach_the_store_or_recall(graph: SessionsGraph) -> None:
    """Through the façade: recorded as tool calls, stored without the
    password (and still JSON where they were), never shown by recall."""
    graph.record_session_start("s-cli", user_id="alice")
    graph.record_actions(
        "s-cli",
        [
            {"action_id": f"cli-{i}", "action_type": "tool_call", "tool_name": "Bash", "text": t}
            for i, (_, t, _) in enumerate(CLI_PROBES)
        ],
    )
    stored = {a.action_id: a for a in graph.get_actions("s-cli")}
    for i, (description, text, secret) in enumerate(CLI_PROBES):
        action = stored[f"cli-{i}"]
        assert secret not in action.text and action.redactions >= 1, description
        if text.startswith("{"):
            json.loads(action.text)
    words = " ".join(line.split()[0] for _, line in COMMAND_LINES)
    rendered = graph.recall("alice", words, limit=100).render(max_tokens=100_000)
    assert "[REDACTED:password]" in rendered
    assert CLI_PASSWORD not in rendered and "Zq8kd93xQ" not in rendered


# -- every rule has a probe ----------------------------------------------------

import sessions_graph.redact as redactor  # noqa: E402

#: Every (text, secret) this module and tests/redact_probes.py hold.
ALL_PROBES = (
    [(t, s) for _, t, s in PROBES]
    + [(t, s) for _, t, s in CLI_PROBES]
    + [(normalise(t), s) for t, s, _ in REAL_WORLD_SECRETS]
)


#: Rules that only name a secret more precisely than a general rule behind
#: them would (``aws_secret_access_key=X`` is also a ``*_key=`` assignment):
#: removing one must change a probe's marker, not leak it.
NAMING_RULES = {"aws_secret_access_key=": "[REDACTED:aws_secret_key]"}


def test_every_rule_has_a_probe_that_only_it_catches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule added without a probe, or one whose probes another rule would
    catch as well, fails here: each rule is removed in turn, and some probe
    must then leak (or, for ``NAMING_RULES``, lose the rule's marker)."""
    names = [rule.name for rule in redactor.RULES]
    assert len(set(names)) == len(names) and all(names)
    assert [s for t, s in ALL_PROBES if s in redact(t)] == []  # all caught with every rule
    unprobed = []
    rules = redactor.RULES
    everything = {text: redact(text) for text, _ in ALL_PROBES}
    redact_all = everything.__getitem__
    for rule in rules:
        others = tuple(r for r in rules if r is not rule)
        monkeypatch.setattr(redactor, "RULES", others)
        if rule.name in NAMING_RULES:
            marker = NAMING_RULES[rule.name]
            if not any(marker not in redact(t) for t, _ in ALL_PROBES if marker in redact_all(t)):
                unprobed.append(rule.name)
        elif not any(secret in redact(text) for text, secret in ALL_PROBES):
            unprobed.append(rule.name)
    monkeypatch.undo()
    assert unprobed == []
