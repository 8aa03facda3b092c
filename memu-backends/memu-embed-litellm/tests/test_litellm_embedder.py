"""LitellmEmbedder against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from memu_embed_litellm import LitellmEmbedder

from memu_core.errors import ConfigError, EmbeddingError
from memu_core.testing.embedding_server import EmbeddingServer

KEY_VARS = (
    "MEMU_API_KEY",
    "OPENAI_API_KEY",
    "JINA_API_KEY",
    "VOYAGE_API_KEY",
    "OPENROUTER_API_KEY",
    "ARK_API_KEY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("MEMU_"):
            monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(dimension=48) as s:
        yield s


def _embedder(server: EmbeddingServer, **kw: object) -> LitellmEmbedder:
    kw.setdefault("model", "hashed-48")
    kw.setdefault("sleep", lambda _s: None)
    return LitellmEmbedder("openai-compatible", base_url=server.base_url, **kw)  # type: ignore[arg-type]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_in_order_normalised_and_fingerprinted(server: EmbeddingServer) -> None:
    emb = _embedder(server)
    texts = ["how do I run the tests", "running the test suite", "the weather is sunny"]
    first = emb.embed(texts)
    again = emb.embed(texts)
    assert first == again
    assert [len(v) for v in first] == [48, 48, 48]
    assert all(math.isclose(_cos(v, v), 1.0, rel_tol=1e-9) for v in first)
    assert _cos(first[0], first[1]) > _cos(first[0], first[2])
    fp = emb.fingerprint
    assert (fp.provider, fp.model, fp.dimension) == ("openai-compatible", "hashed-48", 48)


def test_empty_input_makes_no_request(server: EmbeddingServer) -> None:
    assert _embedder(server).embed([]) == []
    assert server.request_count == 0


def test_dimension_is_probed_once_and_cached(server: EmbeddingServer) -> None:
    emb = _embedder(server, model="probe-model")
    assert emb.fingerprint.dimension == 48
    assert server.request_count == 1
    assert emb.fingerprint.dimension == 48
    # A second embedder for the same (provider, model, URL) reuses what the process learned.
    assert _embedder(server, model="probe-model").fingerprint.dimension == 48
    assert server.request_count == 1


def test_batches_are_sent_concurrently_within_the_bound(server: EmbeddingServer) -> None:
    server.latency = 0.2
    emb = _embedder(server, batch_size=2, concurrency=3)
    texts = [f"memory line number {i}" for i in range(11)]
    vectors = emb.embed(texts)
    assert server.request_count == 6
    assert server.texts_received == 11
    assert 1 < server.max_in_flight <= 3
    # Order survives concurrency.
    assert vectors == _embedder(server, batch_size=64).embed(texts)


def test_429_honours_retry_after_with_a_cap(server: EmbeddingServer) -> None:
    waits: list[float] = []
    emb = _embedder(server, sleep=waits.append, retry_after_cap=0.5)
    server.fail_next(429, retry_after="0.2")
    server.fail_next(429, retry_after="120")
    assert len(emb.embed(["rate limited text"])) == 1
    assert waits == [0.2, 0.5]
    assert server.request_count == 3


def test_5xx_is_retried_then_reported(server: EmbeddingServer) -> None:
    waits: list[float] = []
    emb = _embedder(server, sleep=waits.append, max_attempts=3)
    server.fail_next(500)
    assert len(emb.embed(["flaky"])) == 1
    assert server.request_count == 2
    server.reset_counts()
    server.fail_next(503, times=3)
    with pytest.raises(EmbeddingError, match="HTTP 503 after 3 attempts"):
        emb.embed(["down"])
    assert server.request_count == 3
    assert waits == [0.25, 0.25, 0.5]


def test_401_fails_at_once_and_names_the_variable(server: EmbeddingServer) -> None:
    server.fail_next(401)
    emb = _embedder(server)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["secret"])
    message = str(info.value)
    assert "HTTP 401" in message and "MEMU_API_KEY" in message and "OPENAI_API_KEY" in message
    assert "\n" not in message
    assert server.request_count == 1


def test_403_names_the_key_source(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.fail_next(403)
    emb = LitellmEmbedder("openai", base_url=server.base_url, sleep=lambda _s: None)
    with pytest.raises(EmbeddingError, match=r"HTTP 403 \(the key came from OPENAI_API_KEY\)"):
        emb.embed(["x"])


def test_wrong_vector_count_is_an_error(server: EmbeddingServer) -> None:
    server.short_next(1)
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        _embedder(server).embed(["one", "two"])
    assert server.request_count == 1


def test_a_slow_answer_times_out_and_is_retried(server: EmbeddingServer) -> None:
    server.slow_next(2.0)
    emb = _embedder(server, timeout=0.3)
    assert len(emb.embed(["patience"])) == 1
    assert server.request_count == 2


def test_unreachable_server_is_one_clear_line() -> None:
    emb = LitellmEmbedder(
        "openai-compatible", base_url="http://127.0.0.1:9/v1", max_attempts=2, sleep=lambda _s: None
    )
    with pytest.raises(EmbeddingError, match="could not reach embedding provider") as info:
        emb.embed(["x"])
    assert "\n" not in str(info.value)


def test_provider_key_variable_is_read_for_its_value(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # memU sent the *name* "OPENAI_API_KEY" as the bearer token (its bug B1).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-value")
    LitellmEmbedder("openai", base_url=server.base_url).embed(["a"])
    assert server.requests[-1]["auth"] == "Bearer sk-real-value"
    assert server.requests[-1]["model"] == "text-embedding-3-small"
    monkeypatch.setenv("MEMU_API_KEY", "sk-memu-wins")
    LitellmEmbedder.from_settings(SimpleNamespace(embed_provider="openai", base_url=server.base_url)).embed(
        ["b"]
    )
    assert server.requests[-1]["auth"] == "Bearer sk-memu-wins"


def test_jina_route_reads_jina_key(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="set MEMU_API_KEY or JINA_API_KEY"):
        LitellmEmbedder("jina")
    monkeypatch.setenv("JINA_API_KEY", "jina-value")
    emb = LitellmEmbedder("jina", base_url=server.base_url)
    assert len(emb.embed(["hello"])) == 1
    assert server.requests[-1] == {
        "model": "jina-embeddings-v3",
        "inputs": 1,
        "auth": "Bearer jina-value",
        "target": "/v1/embeddings",
    }
    assert emb.fingerprint.provider == "jina"


@pytest.mark.parametrize(
    ("provider", "canonical", "model"),
    [
        ("doubao", "volcengine", "doubao-embedding-large-text-250515"),
        ("OpenRouter", "openrouter", "openai/text-embedding-3-small"),
        ("voyage", "voyage", "voyage-3.5"),
        ("mistral", "mistral", "mistral-embed"),
        ("ollama", "ollama", "nomic-embed-text"),
    ],
)
def test_provider_defaults(provider: str, canonical: str, model: str) -> None:
    emb = LitellmEmbedder(provider, api_key="k")
    assert (emb.spec.name, emb.model) == (canonical, model)


def test_configuration_errors_name_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="set MEMU_BASE_URL"):
        LitellmEmbedder("openai-compatible")
    with pytest.raises(ConfigError, match="set MEMU_EMBED_MODEL"):
        LitellmEmbedder("someprovider", api_key="k")
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "openai-compatible")
    monkeypatch.setenv("MEMU_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("MEMU_EMBED_BATCH_SIZE", "lots")
    with pytest.raises(ConfigError, match="MEMU_EMBED_BATCH_SIZE='lots'"):
        LitellmEmbedder.from_settings(None)


def test_bedrock_without_boto3_names_the_install() -> None:
    import importlib.util

    if importlib.util.find_spec("boto3") is not None:
        pytest.skip("boto3 is installed here")
    with pytest.raises(ConfigError, match=r"pip install 'memu-embed-litellm\[bedrock\]'"):
        LitellmEmbedder("bedrock")


def test_memu_http_proxy_wins_even_for_loopback(server: EmbeddingServer) -> None:
    # The server doubles as a forward proxy: the dead target port proves the request went through it.
    emb = LitellmEmbedder(
        "openai-compatible", base_url="http://127.0.0.1:9/v1", proxy=f"http://127.0.0.1:{server.port}"
    )
    assert len(emb.embed(["via proxy"])) == 1
    assert server.requests[-1]["target"] == "http://127.0.0.1:9/v1/embeddings"


def test_loopback_ignores_ambient_proxy(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # A dead ambient proxy: if memu used it for a loopback server, the request would fail.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert len(_embedder(server, max_attempts=1).embed(["direct"])) == 1
    assert server.requests[-1]["target"] == "/v1/embeddings"


def _run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def test_plugin_import_is_light() -> None:
    result = _run(
        """
        import sys
        import memu_embed_litellm.plugin
        heavy = [m for m in ("litellm", "openai", "tenacity", "numpy") if m in sys.modules]
        print(heavy)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_importing_and_calling_litellm_contacts_no_other_host() -> None:
    # Every outbound connection attempt to a non-loopback address is recorded and refused.
    result = _run(
        """
        import socket
        attempts = []
        real_connect = socket.socket.connect
        def guarded(self, address):
            host = address[0] if isinstance(address, tuple) else str(address)
            if host not in ("127.0.0.1", "::1", "localhost"):
                attempts.append(address)
                raise OSError("network disabled by the test")
            return real_connect(self, address)
        socket.socket.connect = guarded
        real_getaddrinfo = socket.getaddrinfo
        def guarded_dns(host, *a, **k):
            if host not in ("127.0.0.1", "::1", "localhost", None):
                attempts.append(host)
                raise socket.gaierror("dns disabled by the test")
            return real_getaddrinfo(host, *a, **k)
        socket.getaddrinfo = guarded_dns
        from memu_embed_litellm.embedder import _import_litellm, LitellmEmbedder
        from memu_core.testing.embedding_server import EmbeddingServer
        litellm = _import_litellm()
        assert litellm.model_cost, "the bundled cost map should be loaded"
        with EmbeddingServer() as server:
            LitellmEmbedder("openai-compatible", base_url=server.base_url, model="m").embed(["a", "b"])
        print("attempts", attempts)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "attempts []" in result.stdout


def test_base64_is_used_and_decoded_exactly(server: EmbeddingServer) -> None:
    from memu_core.testing.embedding_server import hashed_vector

    vector = _embedder(server).embed(["base64 round trip"])[0]
    expected = hashed_vector("base64 round trip", 48)
    assert all(abs(a - b) < 1e-6 for a, b in zip(vector, expected, strict=True))


def test_a_server_without_base64_gets_floats() -> None:
    with EmbeddingServer(dimension=16, base64=False) as plain:
        emb = _embedder(plain, model="plain")
        assert len(emb.embed(["first"])) == 1
        assert plain.request_count == 2  # the refused base64 request, then floats
        assert len(emb.embed(["second"])) == 1
        assert plain.request_count == 3  # remembered: floats straight away


def test_describe_never_shows_the_key(server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    described = LitellmEmbedder("openai", base_url=server.base_url).describe()
    assert described["api_key_from"] == "OPENAI_API_KEY"
    assert "sk-very-secret" not in repr(described)
    assert described["model"] == "text-embedding-3-small" and described["provider"] == "openai"
