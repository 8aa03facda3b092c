"""Retry timing and proxy rules, as pure functions."""

from __future__ import annotations

import pytest
from memu_embed_litellm.providers import canonical, spec_for
from memu_embed_litellm.retrying import BACKOFF_MAX, retry_after_seconds, wait_seconds
from memu_embed_litellm.transport import build_client, is_loopback


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:11434", True),
        ("http://api.localhost/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.10/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://localhost.evil.com/v1", False),
        ("http://192.168.1.20:11434", False),
        ("http://host.docker.internal:11434", False),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_loopback_detection(url: str | None, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_retry_after_in_seconds_and_as_a_date() -> None:
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": "-3"}) == 0.0
    headers = {"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT", "date": "Wed, 21 Oct 2015 07:28:00 GMT"}
    # Measured against the server's own clock, not ours.
    assert retry_after_seconds(headers) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_doubles_and_is_capped() -> None:
    waits = [wait_seconds(n, None, cap=30.0) for n in range(1, 8)]
    assert waits[:4] == [0.25, 0.5, 1.0, 2.0]
    assert max(waits) == BACKOFF_MAX
    assert wait_seconds(1, None, cap=0.1) == 0.1


def test_provider_names_fold_case_and_aliases() -> None:
    assert canonical(" Doubao ") == "volcengine"
    assert canonical("jina_ai") == "jina"
    assert spec_for("JINA").route == "jina_ai"
    unknown = spec_for("togetherai")
    assert (unknown.route, unknown.default_model) == ("togetherai", "")


def test_client_proxy_choice() -> None:
    explicit = build_client("http://127.0.0.1:1/v1", "http://proxy.example:3128", 5.0)
    ambient = build_client("https://api.openai.com/v1", None, 5.0)
    local = build_client("http://localhost:1/v1", None, 5.0)
    try:
        assert explicit.trust_env is False
        assert ambient.trust_env is True
        assert local.trust_env is False
        assert local.timeout.connect == 5.0 and ambient.timeout.read == 5.0
    finally:
        for client in (explicit, ambient, local):
            client.close()
