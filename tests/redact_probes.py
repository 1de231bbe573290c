"""Secrets as they reach an Action's text, one realistic probe each.

Each probe is (description, text, secret): the text as a tool call, tool
result or message carries it (tool calls are their input as JSON, so a file
written or a command run arrives JSON-escaped), and the secret that must not
survive redaction. Shared by the tests and ``bench/bench_redact.py``, with
``ADVERSARIAL``, the inputs that would be slow if a pattern were quadratic.
"""

from __future__ import annotations

import json

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
XOXB = "xoxb-12345678901-abcdefghijklmn"

#: Texts that cost seconds to minutes when repeated to 200,000 characters with
#: patterns that rescan the rest of a line (or a run) from every starting
#: point ("curl " * 40000 took 121 s): the test bounds them, the bench shows
#: their scaling.
ADVERSARIAL = [
    "curl ",
    "curl -u ",
    "mysql -p ",
    "docker login -p ",
    "key=",
    "token:",
    "password=",
    "password:",
    "cookie:",
    "authorization:",
    "a.",
    "eyJ",
    "&sig",
    "pypi-AgE",
    "--password",
    "AKIAIOSFODNN7EXAMPLE ",
    "name: password\n",
    "api_key: abc\n",
    "\\u001b[",
    "%",
    '\\"password\\": \\"',
    "\\",
]


def _call(**tool_input: object) -> str:
    """A tool call's text, as the hooks record it."""
    return json.dumps(tool_input, ensure_ascii=False, sort_keys=True)


PROBES: list[tuple[str, str, str]] = [
    # -- config files shown or written -------------------------------------
    (
        "compose file, letters-only password",
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        "      POSTGRES_PASSWORD: examplepassword\n      POSTGRES_USER: app\n",
        "examplepassword",
    ),
    (
        "k8s Secret stringData",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n"
        "  username: admin\n  password: supersecretvalue\n",
        "supersecretvalue",
    ),
    (
        "k8s env list, name/value pair",
        "env:\n  - name: API_TOKEN\n    value: lettersonlytoken\n  - name: LOG_LEVEL\n"
        "    value: debug\n",
        "lettersonlytoken",
    ),
    (
        "Write of config.json (escaped JSON in the tool call)",
        _call(
            file_path="/app/config.json",
            content=json.dumps({"db": {"user": "app", "password": "my pass phrase"}}, indent=2),
        ),
        "my pass phrase",
    ),
    (
        "Write of a .env file",
        _call(file_path="/app/.env", content="DB_HOST=db\nDB_PASSWORD=lettersonly\nDEBUG=0\n"),
        "lettersonly",
    ),
    (
        "Write of a k8s secret",
        _call(file_path="k8s/secret.yaml", content="stringData:\n  password: hunterhunter\n"),
        "hunterhunter",
    ),
    (
        "Write of a private key",
        _call(
            file_path="/home/u/.ssh/id_ed25519",
            content="-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n"
            "-----END OPENSSH PRIVATE KEY-----\n",
        ),
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    (
        "~/.aws/credentials",
        f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n",
        "K7MDENG/bPxRfiCY",
    ),
    (
        "AWS console credentials CSV, bare secret",
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        f"deploy,,{AWS_ID},{AWS_SECRET},https://123456789012.signin.aws.amazon.com/console\n",
        "K7MDENG/bPxRfiCY",
    ),
    (
        "terraform.tfvars",
        'region      = "eu-west-1"\ndb_password = "letters only pass"\n',
        "letters only pass",
    ),
    (
        "Django settings",
        "DEBUG = False\nSECRET_KEY = 'django-insecure-abcdefghijklmnop'\n",
        "django-insecure-abcdefghijklmnop",
    ),
    (
        ".pypirc",
        "[pypi]\nusername = __token__\n"
        "password = pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0\n",
        "AgEIcHlwaS5vcmc",
    ),
    (
        ".npmrc",
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n",
        "npm_abcdefghijklmnop",
    ),
    (
        "OAuth client JSON, letters-only secret",
        '{"client_id": "app", "client_secret": "lettersonlysecret"}',
        "lettersonlysecret",
    ),
    (
        "YAML api_key, letters only",
        "openai:\n  model: gpt-4o\n  api_key: lettersonlykey\n",
        "lettersonlykey",
    ),
    (
        "heroku config output",
        "=== app Config Vars\nDATABASE_PASSWORD: lettersonlypassword\nLOG_LEVEL:         info\n",
        "lettersonlypassword",
    ),
    # -- commands run ----------------------------------------------------------
    (
        "curl -d JSON body in a Bash call",
        _call(
            command="curl -X POST https://api.example.com/login -H 'Content-Type: application/json'"
            ' -d \'{"username":"bob","password":"my pass phrase"}\''
        ),
        "my pass phrase",
    ),
    ("curl -u", _call(command="curl -u admin:Zq8kd93x https://api.example.com/v1"), "Zq8kd93x"),
    (
        "docker login -p",
        _call(command="docker login -u bob -p Zq8kd93x registry.example.com"),
        "Zq8kd93x",
    ),
    ("mysql -p", _call(command="mysql -u root -pZq8kd93x shop < dump.sql"), "Zq8kd93x"),
    ("redis-cli -a", _call(command="redis-cli -h cache -a Zq8kd93x ping"), "Zq8kd93x"),
    (
        "kubectl --from-literal",
        _call(command="kubectl create secret generic db --from-literal=password=lettersonly"),
        "lettersonly",
    ),
    (
        "psql connection string",
        _call(command="psql 'host=db user=app password=lettersonly dbname=app'"),
        "lettersonly",
    ),
    (
        "export in a command",
        _call(command="export OPENAI_API_KEY=sk-proj-Abcdefghijklmnopqrstuvwx123456 && make"),
        "sk-proj-Abcdefghijklmnop",
    ),
    # -- command output ----------------------------------------------------------
    (
        "env output",
        f"HOME=/root\nGITHUB_TOKEN={GHP}\nPATH=/usr/bin\n",
        GHP,
    ),
    (
        "grep --color output, AWS key after ANSI codes",
        f"config/prod.env:3:\x1b[01;31m\x1b[K{AWS_ID}\x1b[m\x1b[K\n",
        AWS_ID,
    ),
    ("bold token after an ANSI code", f"your token: \x1b[1m{GHP}\x1b[0m\n", GHP),
    (
        "ANSI-coloured env listing",
        "\x1b[32mANTHROPIC_API_KEY\x1b[0m=sk-ant-api03-abcdefghijklmnopqrstuvwxyz\n",
        "sk-ant-api03-abcdefghij",
    ),
    (
        "URL-encoded token in an access log",
        f'GET /cb?next=https%3A%2F%2Fapp.example.com%2Fcb%3Ftoken%3D{GHP} HTTP/1.1" 302\n',
        GHP,
    ),
    (
        "JSON-escaped token",
        '{"text": "SLACK_BOT_TOKEN\\u003d' + XOXB + '"}',
        XOXB,
    ),
    (
        "curl -v Authorization header",
        "> GET /v1/me HTTP/2\n> Host: api.example.com\n> Authorization: Bearer abc.def.ghi123456\n",
        "abc.def.ghi123456",
    ),
    (
        "OAuth token response",
        '{"access_token": "ya29.a0AfH6SMBxlettersAndDigits", "token_type": "Bearer"}',
        "ya29.a0AfH6SMBx",
    ),
    (
        "git remote -v with a token",
        "origin\thttps://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r"
        " (fetch)\n",
        "ghs_abcdefghijklmnop",
    ),
    (
        "JDBC URL",
        "url: jdbc:mysql://db:3306/app?user=app&password=lettersonly&useSSL=true\n",
        "lettersonly",
    ),
    (
        "form body",
        "grant_type=password&username=bob&password=hunter%20two%21\n",
        "hunter%20two%21",
    ),
    ("Set-Cookie", "< Set-Cookie: sessionid=abc123def456; Path=/; HttpOnly\n", "abc123def456"),
    (
        "Slack webhook",
        "POST https://hooks.slack.com/services/T0001/B0001/XXXXabcd1234efgh\n",
        "XXXXabcd1234efgh",
    ),
    (
        "Stripe key in code",
        'stripe.api_key = "sk_live_51HabcdefghijKLMNOPqrst"\n',
        "51HabcdefghijKLMNOP",
    ),
    (
        "Google API key in JSON",
        '{"apiKey": "AIzaSyA1234567890abcdefghijklmnopqrstu"}',
        "AIzaSyA1234567890",
    ),
    (
        "MongoDB URI with a password",
        "mongodump --uri mongodb+srv://admin:p4ss@cluster0.example.net/db\n",
        "p4ss",
    ),
    (
        "tool output JSON inside a tool result (double escaped)",
        json.dumps({"stdout": json.dumps({"password": "pass word two"})}),
        "pass word two",
    ),
    (
        "private key in command output",
        "$ cat key.pem\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\n"
        "-----END RSA PRIVATE KEY-----\n",
        "MIIEowIBAAKCAQEA1234",
    ),
]
