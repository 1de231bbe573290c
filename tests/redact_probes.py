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
    "htpasswd -b ",
    "htpasswd -nb a ",
    "echo a ",
    "echo 'a ",
    "-storepass ",
    "sqlplus a/",
    "smbclient -U a%",
    "bot1234567:AA",
    "1234567:AA",
    "sshpass -p '",
    'mongo -p \\"',
    "pass:'",
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
        "tool result holding a Write call holding a JSON file (three encodings deep)",
        json.dumps(
            {"stdout": json.dumps({"content": json.dumps({"password": "pass word three"})})}
        ),
        "pass word three",
    ),
    (
        "Twilio API key SID in prose",
        "created key SK0123456789abcdef0123456789abcdef ok\n",
        "0123456789abcdef0123",
    ),
    (
        "bare JWT in a log line",
        "auth ok for eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
        " at 10:02\n",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    (
        "Stripe webhook signing secret",
        "listening, secret whsec_abcdefghijklmnop0123 ready\n",
        "whsec_abcdefghijklmnop",
    ),
    (
        "Sentry DSN",
        "SENTRY_DSN=https://0123abcd4567ef89@o12.ingest.sentry.io/42\n",
        "0123abcd4567ef89",
    ),
    (
        "DSN= in a .env file",
        "DSN=https://0123abcd4567ef89@o12.ingest.sentry.io/42\n",
        "0123abcd4567ef89",
    ),
    (
        "Telegram bot token in a Bot API URL",
        "curl https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe\n",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    (
        "Telegram bot token as printed by BotFather",
        "Use this token to access the HTTP API:\n123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw\n",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    ),
    # -- provider tokens in prose: no key name around them ---------------------------
    (
        "Anthropic key in prose",
        "rotated sk-ant-api03-abcdefghijklmnopqrstuv today\n",
        "abcdefghijklmnopqrstuv",
    ),
    (
        "OpenAI key in prose",
        "rotated sk-proj-Abcdefghijklmnopqrstuvwx123456 today\n",
        "Abcdefghijklmnopqrstuvwx",
    ),
    (
        "GitLab token in prose",
        "use glpat-abcdefghij1234567890 for the runner\n",
        "abcdefghij1234567890",
    ),
    (
        "npm token in prose",
        "publish with npm_abcdefghijklmnopqrstuvwxyz0123456789 ok\n",
        "abcdefghijklmnopqrstuvwxyz",
    ),
    (
        "PyPI token in prose",
        "upload with pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0dXZ3eHl6MDEyMzQ1\n",
        "AgEIcHlwaS5vcmcCJGFiY2Rl",
    ),
    (
        "Google API key in prose",
        "maps key AIzaSyA1234567890abcdefghijklmnopqrstu works\n",
        "AIzaSyA1234567890abcdef",
    ),
    (
        "Authorization header without a scheme",
        "> Authorization: 9f8e7d6c5b4a3b2c1d0e\n",
        "9f8e7d6c5b4a3b2c1d0e",
    ),
    (
        "Bearer token in prose",
        "then call it with Bearer 4f9a8b7c6d5e4f3a2b1c\n",
        "4f9a8b7c6d5e4f3a2b1c",
    ),
    (
        "session cookie under another name",
        "< Set-Cookie: sid=4f9a8b7c6d5e; Path=/\n",
        "4f9a8b7c6d5e",
    ),
    (
        "openssl pass: letters only",
        "openssl enc -aes-256-cbc -pass pass:lettersonly -in f\n",
        "lettersonly",
    ),
    ("a *_KEY with a long value", "DEPLOY_KEY=4f9a8b7c6d5e4f3a2b1c0d9e\n", "4f9a8b7c6d5e4f3a2b1c"),
    (
        "private key in command output",
        "$ cat key.pem\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234\n"
        "-----END RSA PRIVATE KEY-----\n",
        "MIIEowIBAAKCAQEA1234",
    ),
]


# -- passwords on command lines -------------------------------------------------
#: A password with shell and JSON specials, the way a quoted one is typed.
CLI_PASSWORD = "Pa55&w0rd!x"
#: Command lines that carry a password, ``{pw}`` where it goes. Each is tried
#: as typed (``{pw}`` bare where the shell allows it, in single and in double
#: quotes) and inside a JSON-encoded tool call (the double quotes escaped),
#: as ``cli_probes`` builds them.
COMMAND_LINES: list[tuple[str, str]] = [
    ("sshpass -p", "sshpass -p {pw} ssh admin@h"),
    ("sshpass -p attached", "sshpass -p{pw} ssh admin@h"),
    ("sshpass with options first", "sshpass -v -p {pw} scp f admin@h:/tmp"),
    ("mysql -p attached", "mysql -u root -p{pw} shop"),
    ("mysqldump -p attached", "mysqldump -uroot -p{pw} shop > dump.sql"),
    ("mariadb --password=", "mariadb --password={pw} shop"),
    ("mysql --password", "mysql --user=root --password {pw} shop"),
    ("docker login -p", "docker login -u bot -p {pw} registry.example.com"),
    ("podman login --password", "podman login --username bot --password {pw} quay.io"),
    ("helm registry login -p", "helm registry login -u bot -p {pw} reg.example.com"),
    ("oc login -p", "oc login -u admin -p {pw} https://api.cluster:6443"),
    ("az login -p", "az login -u me@example.com -p {pw}"),
    ("redis-cli -a", "redis-cli -h cache -a {pw} ping"),
    ("redis-cli --pass", "redis-cli --pass {pw} ping"),
    ("curl -u", "curl -u admin:{pw} https://api.example.com"),
    ("curl --user", "curl --user admin:{pw} https://api.example.com"),
    ("curl --proxy-user", "curl --proxy-user bob:{pw} -x proxy:3128 https://x.io"),
    ("wget --password", "wget --user=bob --password={pw} https://x.io/f"),
    ("wget --http-password", "wget --http-user=bob --http-password {pw} https://x.io/f"),
    ("zip -P", "zip -P {pw} -r backup.zip data/"),
    ("unzip -P", "unzip -P {pw} backup.zip"),
    ("7z -p attached", "7z a -p{pw} backup.7z data/"),
    ("mongo -p", "mongo -u admin -p {pw} --authenticationDatabase admin"),
    ("mongosh -p", "mongosh mongodb://db:27017 -u admin -p {pw}"),
    ("mongodump --password", "mongodump --username admin --password {pw} --db shop"),
    ("htpasswd -b", "htpasswd -b /etc/nginx/.htpasswd alice {pw}"),
    ("htpasswd -bc", "htpasswd -bc .htpasswd alice {pw}"),
    ("htpasswd -nb", "htpasswd -nb alice {pw}"),
    ("htpasswd -B -b", "htpasswd -B -b .htpasswd alice {pw}"),
    ("openssl pass:", "openssl enc -aes-256-cbc -pass pass:{pw} -in f -out f.enc"),
    ("openssl -passout pass:", "openssl genrsa -aes256 -passout pass:{pw} -out k.pem 4096"),
    ("ldapsearch -w", "ldapsearch -x -D cn=admin,dc=ex,dc=com -w {pw} -b dc=ex,dc=com"),
    ("sqlcmd -P", "sqlcmd -S db -U sa -P {pw} -Q 'SELECT 1'"),
    ("keytool -storepass", "keytool -list -keystore ks.jks -storepass {pw}"),
    ("jarsigner -keypass", "jarsigner -keystore ks.jks -storepass {pw} -keypass {pw} app.jar a"),
    ("ssh-keygen -N", "ssh-keygen -t ed25519 -N {pw} -f ~/.ssh/id_deploy"),
    ("smbclient -U user%pass", "smbclient //fs/share -U alice%{pw}"),
    ("mosquitto_pub -P", "mosquitto_pub -h broker -u bot -P {pw} -t t -m hi"),
    ("sqlplus user/pass@db", "sqlplus scott/{pw}@orcl"),
    ("echo | docker login --password-stdin", "echo {pw} | docker login -u bot --password-stdin"),
    ("echo | sudo -S", "echo {pw} | sudo -S apt-get update"),
    ("PGPASSWORD=", "PGPASSWORD={pw} psql -h db -U app"),
    ("gpg --passphrase", "gpg --batch --passphrase {pw} -d secrets.gpg"),
]


def _quoted(password: str, quote: str) -> str:
    return f"{quote}{password}{quote}"


def cli_probes() -> list[tuple[str, str, str]]:
    """(description, text, secret) for every command line, password quoting
    and encoding: bare (a password without shell specials, as one types it
    unquoted), in single and in double quotes, each as typed, inside a JSON
    tool call, and inside a tool result that shows that call."""
    probes = []
    for name, line in COMMAND_LINES:
        forms = [
            ("bare", line.format(pw="Zq8kd93xQ"), "Zq8kd93xQ"),
            ("'quoted'", line.format(pw=_quoted(CLI_PASSWORD, "'")), CLI_PASSWORD),
            ('"quoted"', line.format(pw=_quoted(CLI_PASSWORD, '"')), CLI_PASSWORD),
        ]
        for form, text, secret in forms:
            probes.append((f"{name}, {form}", text, secret))
            probes.append((f"{name}, {form}, in a tool call", _call(command=text), secret))
            # A tool result that shows the call (a transcript or a log read
            # back): three encodings deep, a quote escaped twice.
            shown = json.dumps({"stdout": _call(command=text)})
            probes.append((f"{name}, {form}, in a tool call shown in a tool result", shown, secret))
    return probes


#: The command-line probes of ``COMMAND_LINES``, built.
CLI_PROBES = cli_probes()
