"""A real OpenAI-compatible embeddings server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/embeddings`` (and ``/embeddings``) in OpenAI's shape, as floats or, when
asked with ``"encoding_format": "base64"``, as base64 float32. Vectors are deterministic: a
hashed bag of words, so texts that share words are near and a paraphrase that keeps the key
words scores above an unrelated sentence. It can be told to fail in the ways
real providers fail (401, 429 with ``Retry-After``, 500, a wrong vector count) or to answer
slowly, and it counts what it received.

Use it in-process::

    with EmbeddingServer(latency=0.02) as server:
        server.fail_next(429, retry_after="1")
        ... base_url=server.base_url ...
        assert server.request_count == 2

or as a process (benchmarks)::

    python -m memu_core.testing.embedding_server --port 0 --latency 0.02

which prints the base URL on its first line of stdout and serves until killed.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import struct
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["EmbeddingServer", "Fault", "hashed_vector"]

_WORD = re.compile(r"[a-z0-9]+")
# Words that carry no topic: dropping them lets "how do I run the tests" sit near
# "running tests" and far from a sentence about the weather.
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def _stem(word: str) -> str:
    """A crude suffix strip so ``running``/``runs``/``run`` land in the same bucket."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    # "running" -> "runn" -> "run": collapse a doubled final consonant left by the strip.
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def hashed_vector(text: str, dimension: int) -> list[float]:
    """The server's deterministic, L2-normalised vector for ``text``.

    Each content word adds +1 or -1 to one of ``dimension`` buckets chosen by a hash. An empty
    or all-stop-word text gets a fixed unit vector, so every answer has a valid norm.
    """
    vector = [0.0] * dimension
    words = [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimension
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


def _encode(vector: list[float], as_base64: bool) -> list[float] | str:
    """A vector as JSON floats, or as OpenAI's base64 of little-endian float32."""
    if not as_base64:
        return vector
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


@dataclass
class Fault:
    """One scripted answer that replaces the next normal one.

    ``status`` is the HTTP status to send (``200`` with ``drop`` > 0 returns that many vectors
    too few); ``retry_after`` becomes the ``Retry-After`` header; ``delay`` seconds are slept
    before answering.
    """

    status: int = 200
    retry_after: str | None = None
    drop: int = 0
    delay: float = 0.0


@dataclass
class _State:
    dimension: int
    latency: float
    base64: bool = True
    faults: deque[Fault] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    max_in_flight: int = 0


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, like a real provider

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr line."""

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:
        """Answer an embeddings request, or the next scripted fault."""
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        # A proxied request carries an absolute URL; the server then doubles as a test proxy.
        path = urlsplit(self.path).path if "://" in self.path else self.path
        if path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        with state.lock:
            state.requests.append(
                {
                    "model": body.get("model"),
                    "inputs": len(texts),
                    "auth": self.headers.get("Authorization"),
                    "target": self.path,
                }
            )
            fault = state.faults.popleft() if state.faults else Fault()
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            if state.latency or fault.delay:
                time.sleep(state.latency + fault.delay)
            self._answer(fault, body, texts, state.dimension)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(self, fault: Fault, body: dict[str, Any], texts: list[Any], dimension: int) -> None:
        if fault.status != 200:
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            kind = {401: "invalid_api_key", 403: "permission_denied", 429: "rate_limit_exceeded"}
            message = {"error": {"message": f"scripted {fault.status}", "code": kind.get(fault.status)}}
            self._send(fault.status, message, headers)
            return
        keep = texts[: max(0, len(texts) - fault.drop)]
        as_base64 = body.get("encoding_format") == "base64"
        if as_base64 and not self.server.state.base64:
            self._send(400, {"error": {"message": "encoding_format base64 is not supported"}})
            return
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": _encode(hashed_vector(str(t), dimension), as_base64),
            }
            for i, t in enumerate(keep)
        ]
        tokens = sum(len(str(t).split()) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "hashed"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hung up first (a timeout test does that on purpose)."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            return
        super().handle_error(request, client_address)


class EmbeddingServer:
    """An OpenAI-compatible embeddings server on ``127.0.0.1`` in a background thread.

    ``dimension`` is the vector length; ``latency`` seconds are added to every request;
    ``base64=False`` makes it refuse ``encoding_format=base64`` with a 400, like some
    OpenAI-compatible servers do.
    """

    def __init__(
        self, *, dimension: int = 64, latency: float = 0.0, port: int = 0, base64: bool = True
    ) -> None:
        self._state = _State(dimension=dimension, latency=latency, base64=base64)
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> EmbeddingServer:
        """Bind and serve in a daemon thread; returns ``self``."""
        httpd = _Server(("127.0.0.1", self._port), _Handler)
        httpd.state = self._state
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="embedding-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> EmbeddingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The bound port (useful when started with ``port=0``)."""
        if self._httpd is None:
            raise RuntimeError("EmbeddingServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- control ----------------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        """Length of every vector served."""
        return self._state.dimension

    @property
    def latency(self) -> float:
        """Seconds added to every request."""
        return self._state.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        self._state.latency = seconds

    def fail_next(
        self, status: int, *, retry_after: str | None = None, times: int = 1, delay: float = 0.0
    ) -> None:
        """Answer the next ``times`` requests with ``status`` (and a ``Retry-After`` header)."""
        with self._state.lock:
            self._state.faults.extend(
                Fault(status=status, retry_after=retry_after, delay=delay) for _ in range(times)
            )

    def short_next(self, missing: int = 1, *, times: int = 1) -> None:
        """Answer the next ``times`` requests with ``missing`` vectors too few."""
        with self._state.lock:
            self._state.faults.extend(Fault(drop=missing) for _ in range(times))

    def slow_next(self, seconds: float, *, times: int = 1) -> None:
        """Delay the next ``times`` answers by ``seconds`` (on top of the fixed latency)."""
        with self._state.lock:
            self._state.faults.extend(Fault(delay=seconds) for _ in range(times))

    # -- observations -------------------------------------------------------------------------
    @property
    def request_count(self) -> int:
        """Embedding requests received so far (faults included)."""
        with self._state.lock:
            return len(self._state.requests)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of what each request carried: ``model``, ``inputs`` (count), the ``auth``
        header and the request ``target`` (an absolute URL when it came through as a proxy)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def texts_received(self) -> int:
        """Total number of input texts received."""
        with self._state.lock:
            return sum(r["inputs"] for r in self._state.requests)

    @property
    def max_in_flight(self) -> int:
        """The most requests that were being answered at the same time."""
        with self._state.lock:
            return self._state.max_in_flight

    def reset_counts(self) -> None:
        """Forget recorded requests (faults still queued stay queued)."""
        with self._state.lock:
            self._state.requests.clear()
            self._state.max_in_flight = 0


def main(argv: list[str] | None = None) -> int:
    """Serve until killed; print the base URL as the first stdout line."""
    parser = argparse.ArgumentParser(description="OpenAI-compatible test embeddings server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dimension", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every request")
    args = parser.parse_args(argv)
    server = EmbeddingServer(dimension=args.dimension, latency=args.latency, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
