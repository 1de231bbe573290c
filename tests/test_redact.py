"""The secret redactor: every shape it promises, and prose it must leave alone."""

from __future__ import annotations

import pytest

from sessions_graph.reconcile.redact import redact


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


def test_redaction_is_idempotent() -> None:
    once = redact("A=1\nGITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nDB_PASSWORD=x1y2z3")
    assert redact(once) == once
