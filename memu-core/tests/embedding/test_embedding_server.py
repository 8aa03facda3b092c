"""The OpenAI-compatible test server itself: shape, determinism, faults, process mode."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import urllib.error
import urllib.request

from memu_core.testing.embedding_server import EmbeddingServer, hashed_vector


def _post(url: str, body: dict[str, object]) -> tuple[int, dict[str, object], dict[str, str]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def test_openai_shape_and_deterministic_vectors() -> None:
    with EmbeddingServer(dimension=16) as server:
        status, body, _ = _post(server.base_url + "/embeddings", {"model": "m", "input": ["a cat", "a dog"]})
        assert status == 200
        data = body["data"]
        assert isinstance(data, list) and [d["index"] for d in data] == [0, 1]
        assert data[0]["embedding"] == hashed_vector("a cat", 16)
        assert math.isclose(sum(x * x for x in data[0]["embedding"]), 1.0)
        assert server.request_count == 1 and server.texts_received == 2


def test_scripted_faults_in_order() -> None:
    with EmbeddingServer() as server:
        server.fail_next(429, retry_after="3")
        server.short_next(1)
        status, _, headers = _post(server.base_url + "/embeddings", {"input": ["x"]})
        assert status == 429 and headers["Retry-After"] == "3"
        status, body, _ = _post(server.base_url + "/embeddings", {"input": ["x", "y"]})
        assert status == 200 and len(body["data"]) == 1  # type: ignore[arg-type]
        status, _, _ = _post(server.base_url + "/nope", {"input": ["x"]})
        assert status == 404


def test_paraphrase_shares_words() -> None:
    def cos(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(hashed_vector(a, 256), hashed_vector(b, 256), strict=True))

    assert cos("how do I run the tests", "running tests") > cos("how do I run the tests", "sunny weather")


def test_process_mode_prints_its_url() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memu_core.testing.embedding_server", "--latency", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        status, _, _ = _post(url + "/embeddings", {"input": "single string"})
        assert status == 200
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
