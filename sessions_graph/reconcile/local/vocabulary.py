"""The local extractor's entity types, and the word lists its patterns use.

One vocabulary for every entity the local extractor stores, so that
``sessions-graph entities`` reads the same whichever session it looks at:

============== ==========================================================
type           what it names
============== ==========================================================
file           a file path as written (``src/app/sender.py``) and, for a
               path with directories, its file name too (``sender.py``)
module         a dotted module path (``app.sender``), or a standard-library
               / runtime built-in module (``asyncio``, ``node:fs``)
package        a third-party package: imported, installed (pip, npm, cargo,
               go, apt ...), or listed in a manifest
tool           a command-line tool that was run (``git``, ``pytest``), or a
               well-known one named in prose
url            a URL, without credentials, query string or fragment
host           a host name or IP address (from URLs, ``host:port``, ``ssh``)
error          an exception, error or failure-state name (``KeyError``,
               ``ECONNREFUSED``, ``E0382``, ``CrashLoopBackOff``)
identifier     a code identifier: in backticks, or defined (``def``/``class``)
env_var        an environment variable's name (never its value)
branch         a git branch
issue          an issue or pull-request reference (``#123``, ``org/repo#12``,
               ``PROJ-42``)
version        a version of something: ``<name> <version>`` or a ``v1.2.3`` tag
person         a person named in prose (named-entity model)
organization   a company or organisation named in prose (model)
product        a product or service named in prose (model, or the list below)
location       a place named in prose (model)
============== ==========================================================
"""

from __future__ import annotations

import sys

#: Every type the local extractor emits, in the table's order.
ENTITY_TYPES = (
    "file",
    "module",
    "package",
    "tool",
    "url",
    "host",
    "error",
    "identifier",
    "env_var",
    "branch",
    "issue",
    "version",
    "person",
    "organization",
    "product",
    "location",
)
#: The types the named-entity model produces (the rest come from patterns).
NER_TYPES = ("person", "organization", "product", "location")

#: Python's standard library: imported, these are modules, not packages.
PYTHON_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
#: Node's built-in modules.
NODE_BUILTINS = frozenset(
    "assert buffer child_process cluster crypto dgram dns events fs http http2 https net os"
    " path perf_hooks process querystring readline stream string_decoder timers tls tty url"
    " util v8 vm worker_threads zlib".split()
)
#: Rust path roots that name no crate.
RUST_ROOTS = frozenset({"std", "core", "alloc", "crate", "self", "super", "Self"})

#: Command-line tools named in prose count as tools only if they are on this
#: list: words that are hardly ever anything else. A command that is *run*
#: needs no list (its first word is the tool).
KNOWN_TOOLS = frozenset(
    """
    git gh pytest tox nox ruff mypy pyright black isort flake8 pylint pre-commit pip pip3 pipx
    uv poetry conda virtualenv python python3 ipython jupyter node npm npx yarn pnpm bun deno
    tsc eslint prettier jest vitest webpack vite cargo rustc rustup clippy go gofmt gradle
    mvn javac kubectl helm k9s minikube kind docker docker-compose podman terraform ansible
    packer vagrant aws gcloud az heroku flyctl vercel netlify psql mysql sqlite3 redis-cli
    mongosh mgconsole curl wget ssh scp rsync jq yq sed awk grep rg fzf tmux vim nvim make cmake
    ninja gcc clang valgrind gdb lldb strace perf htop systemctl journalctl nginx gunicorn
    uvicorn celery alembic pgbench ab wrk locust k6 brew apt apt-get dnf yum apk openssl
    pyenv nvm sdkman bazel buck just direnv grpcurl protoc sphinx mkdocs hugo pg_dump
    pg_restore pg_isready sqlfluff dbt flyway liquibase
    """.split()
)
#: Packages named in prose count as packages only if they are on this list:
#: well-known names that are no English word ("requests", "click" or "rich"
#: count only when imported, installed or listed in a manifest).
KNOWN_PACKAGES = frozenset(
    """
    numpy pandas scipy matplotlib seaborn sklearn scikit-learn torch tensorflow keras pydantic
    fastapi starlette django flask werkzeug jinja2 sqlalchemy alembic psycopg2 psycopg asyncpg
    httpx aiohttp urllib3 certifi tenacity structlog loguru celery boto3 botocore pymongo
    kafka-python aiokafka pyyaml orjson ujson marshmallow attrs pytest-xdist xdist hypothesis
    lightrag neo4j openai anthropic langchain transformers spacy lodash axios
    webpack-dev-server zod zustand redux react-dom dayjs moment serde tokio reqwest anyhow
    thiserror clap rayon actix-web axum diesel sqlx
    """.split()
)
#: Shell words that run nothing worth remembering (builtins, control flow).
NOT_TOOLS = frozenset(
    """
    cd export source set unset alias unalias echo printf if then else elif fi for while until
    do done case esac in function return exit true false test time sudo env nohup exec eval
    local read shift trap wait let declare typeset builtin command type which true
    """.split()
)
#: Commands whose next word is the real tool (``sudo make``, ``npx eslint``).
PREFIX_COMMANDS = frozenset({"sudo", "time", "env", "nohup", "exec", "npx", "pnpx", "bunx"})

#: Well-known products and services, recognised in prose without the model
#: (which often mislabels them: "Kubernetes" as a person). Matched with this
#: exact capitalisation, as whole words.
KNOWN_PRODUCTS = frozenset(
    """
    Memgraph Neo4j PostgreSQL Postgres MySQL MariaDB SQLite Redis MongoDB Elasticsearch
    OpenSearch Kafka RabbitMQ Cassandra DynamoDB ClickHouse Snowflake BigQuery Kubernetes
    Docker Helm Terraform Ansible Nginx Traefik Grafana Prometheus Datadog Sentry Jenkins
    GitHub GitLab Bitbucket Jira Confluence Slack Linux macOS Windows Ubuntu Debian Alpine
    Python Node.js TypeScript JavaScript Rust Go Java React Vue Angular Django Flask FastAPI
    Celery Airflow Spark Hadoop Lambda S3 EC2 ECS EKS GKE AKS CloudFront CloudWatch
    Cloudflare Vercel Heroku Netlify Firebase Supabase Stripe Twilio OpenAI Anthropic
    Claude ChatGPT LightRAG LangChain Pydantic SQLAlchemy Alembic Gunicorn Uvicorn Vite
    Webpack Storybook Playwright Selenium Cypress Postman Swagger OpenAPI GraphQL gRPC
    Tantivy Cypher Vault Consul ArgoCD CircleCI Kibana Logstash Jaeger OpenTelemetry Istio
    """.split()
)
#: Of the products above, those that are organisations when named alone.
KNOWN_ORGANIZATIONS = frozenset({"Stripe", "Twilio", "OpenAI", "Anthropic", "Cloudflare"})

#: Top-level domains a bare host name must end with to count without a scheme
#: (``api.stripe.com``), so that file names and dotted code are not hosts.
HOST_TLDS = frozenset(
    "com org net io dev ai app co cloud internal local localdomain svc cluster lan corp"
    " us uk de fr eu nl se ch sh tech site xyz info biz me gg so".split()
)

#: File names without an extension that are files nonetheless.
KNOWN_FILENAMES = frozenset(
    """
    Dockerfile Makefile Procfile Gemfile Jenkinsfile Vagrantfile Rakefile Brewfile Justfile
    Containerfile Caddyfile CODEOWNERS LICENSE README CHANGELOG .env .gitignore .dockerignore
    .npmrc .bashrc .zshrc .profile .editorconfig .pre-commit-config.yaml
    """.split()
)
#: Extensions that make a word a file name.
FILE_EXTENSIONS = frozenset(
    """
    py pyi pyx ipynb js mjs cjs jsx ts tsx vue svelte json jsonl toml yaml yml md rst txt cfg
    ini conf env sh bash zsh fish ps1 rs go java kt kts scala rb php c h cc cpp hpp cs swift
    m sql graphql proto html css scss less lock tf tfvars hcl xml gradle csv tsv log db sqlite
    cypher dockerfile properties plist service timer nix lua pl r jl dart ex exs erl el zig
    whl tgz gz zip tar jar war png jpg jpeg gif svg webp ico pdf pem crt key p12 tfplan wasm
    """.split()
)

#: Words before a ``NNN-123`` that make it no issue key (encodings, hashes).
NOT_ISSUE_KEYS = frozenset({"UTF", "SHA", "ISO", "RFC", "TLS", "SSL", "HTTP", "MD", "CVE", "P"})
