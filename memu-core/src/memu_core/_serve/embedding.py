"""Embedding work sent to the warm server: a commit or reindex never loads a model it can borrow.

``memu commit``, a host's ``commit`` and ``memu reindex`` call :func:`route_through_warm_server`
before they open the backend. From then on the configured embedder is wrapped in
:class:`WarmEmbedder`: texts go to the warm server's ``POST /_memu/embed`` (which holds the same
embedder, loaded once, litellm included), and only when no server answers (none running, a
stale or differently configured one, an error) is the embedder built and loaded here, with one
progress line on stderr while it loads. The store is still written by this process.

The handshake headers guarantee the server's embedder is the one this process would build, so
vectors from either side are in the same space; the server states its fingerprint with every
answer and a mismatch falls back too. Vectors travel as base64 float32, which loses nothing:
both local runtimes compute in float32.
"""

from __future__ import annotations

import base64
import contextlib
import sys
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from memu_core import _compose
from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint

EMBED = "/_memu/embed"
CHUNK_TEXTS = 256
CHUNK_CHARS = 1_000_000
"""A request's texts (bounded well under the server's 4 MiB body limit)."""
EMBED_TIMEOUT = 300.0
"""Seconds to wait for one chunk: a remote provider behind the server may be slow."""


def encode_vectors(vectors: Sequence[Sequence[float]]) -> tuple[int, str]:
    """``(dimension, base64 of the float32 little-endian matrix)``."""
    flat = array("f")
    for vector in vectors:
        flat.extend(vector)
    if sys.byteorder != "little":
        flat.byteswap()
    return (len(vectors[0]) if vectors else 0), base64.b64encode(flat.tobytes()).decode("ascii")


def decode_vectors(data: str, count: int, dimension: int) -> list[list[float]]:
    """The inverse of :func:`encode_vectors`; ``ValueError`` when the sizes disagree."""
    flat = array("f")
    flat.frombytes(base64.b64decode(data))
    if sys.byteorder != "little":
        flat.byteswap()
    if len(flat) != count * dimension:
        raise ValueError(f"expected {count}x{dimension} floats, got {len(flat)}")
    values = flat.tolist()
    return [values[i * dimension : (i + 1) * dimension] for i in range(count)]


class WarmEmbedder(Embedder):
    """The configured embedder, borrowed from the warm server when one answers."""

    name: ClassVar[str] = "warm"

    def __init__(self, build_local: Callable[[], Embedder], *, autostart: bool) -> None:
        self._build_local = build_local
        self._autostart = autostart
        self._local: Embedder | None = None
        self._remote_ok = True
        self._fingerprint: Fingerprint | None = None
        self._loaded_here = False
        self.remote_texts = 0
        """Texts the warm server embedded for this process (tests and benchmarks read it)."""

    @classmethod
    def from_settings(cls, settings: Any) -> WarmEmbedder:  # pragma: no cover - built by route
        raise NotImplementedError("WarmEmbedder wraps the configured embedder; see route_through_warm_server")

    # -- the two sides ------------------------------------------------------------------------
    def _ask(self, texts: list[str]) -> tuple[Fingerprint, list[list[float]]] | None:
        from memu_core._serve import client

        try:
            answer = client.request("POST", EMBED, {"texts": texts}, timeout=EMBED_TIMEOUT)
            fp = Fingerprint(**answer["fingerprint"])
            vectors = decode_vectors(answer["vectors"], len(texts), fp.dimension) if texts else []
        except client.Unavailable:
            if self._autostart:
                client.ensure_started()
            self._remote_ok = False
            return None
        except (client.Refused, OSError, ValueError, KeyError, TypeError):
            self._remote_ok = False
            return None
        if self._fingerprint is not None and fp != self._fingerprint:
            self._remote_ok = False  # another space: never mix, do the work here
            return None
        self._fingerprint = fp
        return fp, vectors

    def _here(self) -> Embedder:
        if self._local is None:
            self._local = self._build_local()
        return self._local

    # -- Embedder ----------------------------------------------------------------------------
    @property
    def fingerprint(self) -> Fingerprint:
        if self._fingerprint is None and self._remote_ok:
            self._ask([])
        if self._fingerprint is None:
            self._fingerprint = self._here().fingerprint
        return self._fingerprint

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = []
        pending = list(texts)
        while pending and self._remote_ok:
            chunk: list[str] = []
            size = 0
            while pending and len(chunk) < CHUNK_TEXTS and (not chunk or size + len(pending[0]) <= CHUNK_CHARS):
                size += len(pending[0])
                chunk.append(pending.pop(0))
            answer = self._ask(chunk)
            if answer is None:
                pending = chunk + pending
                break
            out.extend(answer[1])
            self.remote_texts += len(chunk)
        if pending:
            out.extend(self._embed_here(pending))
        return out

    def _embed_here(self, texts: list[str]) -> list[list[float]]:
        embedder = self._here()
        if self._loaded_here:
            return embedder.embed(texts)
        print(
            f"memu: no warm server answered; loading the {embedder.name} embedder in this process "
            f"for {len(texts)} text(s)…",
            file=sys.stderr,
            flush=True,
        )
        started = time.monotonic()
        vectors = embedder.embed(texts)
        self._loaded_here = True
        print(f"memu: embedded {len(texts)} text(s) in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        return vectors


@contextlib.contextmanager
def route_through_warm_server(*, autostart: bool) -> Iterator[None]:
    """While inside, every embedder this process builds asks the warm server first (see the
    module doc); ``autostart``: launch one in the background when none is running
    (``MEMU_SERVE_AUTOSTART`` still decides). The previous front is restored on the way out, so
    a command run in process (tests, the MCP server) leaves nothing behind."""
    previous = _compose.set_embedder_front(lambda build: WarmEmbedder(build, autostart=autostart))
    try:
        yield
    finally:
        _compose.set_embedder_front(previous)


def serve_embed(backend: Any, body: Any) -> dict[str, Any]:
    """The server side of ``POST /_memu/embed``: the backend's own embedder, vectors as base64."""
    from memu_core import v4

    if not isinstance(body, dict) or not isinstance(body.get("texts"), list):
        raise v4.ApiError(422, "the embed body needs a texts list", "VALIDATION_ERROR")
    texts = body["texts"]
    if not all(isinstance(t, str) for t in texts):
        raise v4.ApiError(422, "every text must be a string", "VALIDATION_ERROR")
    embedder = getattr(backend, "embedder", None)
    if embedder is None:
        raise v4.ApiError(404, "this memu serve has no embedder", "NO_EMBEDDER")
    vectors = embedder.embed(texts) if texts else []
    fp = embedder.fingerprint
    dimension, data = encode_vectors(vectors)
    if vectors and dimension != fp.dimension:
        raise v4.ApiError(500, f"the embedder returned {dimension}-dim vectors, not {fp.dimension}", "INTERNAL")
    _give_back_memory()
    return {"fingerprint": {"provider": fp.provider, "model": fp.model, "dimension": fp.dimension}, "vectors": data}


def _give_back_memory() -> None:
    """Hand freed heap back to the system after a large batch (glibc keeps it otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
