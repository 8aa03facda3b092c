"""The last few query embeddings an engine made, so a question asked again is not embedded again.

A query's vector depends only on the embedding space and the exact text, and embedding it is
the largest single cost of a warm hybrid retrieve that a word search cannot hide (about 8 ms of
CPU through the local ONNX model, a network round trip through a provider). Agents ask the same
question more than once (a retried turn, several hosts on one machine, the same check before each
commit), so the warm server keeps the last :data:`SIZE` vectors. Only an exact repeat hits: a
refined question is new text and is embedded as before. Nothing here depends on the store, so no
write invalidates an entry; a different model is a different key (ADR 0030's amendment).
"""

from __future__ import annotations

from array import array

from memu_core._lru import Lru
from memu_core.types import Fingerprint

SIZE = 256
"""Entries kept: 256 vectors of 384 doubles are about 0.8 MB, nothing beside the model."""


class QueryVectors:
    """A thread-safe least-recently-used map of ``(embedding space, query text)`` to its vector."""

    def __init__(self, size: int = SIZE) -> None:
        # array('d') holds each component exactly as the embedder returned it, in an eighth of
        # the memory a list of Python floats takes.
        self._kept: Lru[tuple[Fingerprint, str], array[float]] = Lru(size)

    @property
    def hits(self) -> int:
        """Lookups answered from memory (counted for tests and benchmarks)."""
        return self._kept.hits

    @property
    def misses(self) -> int:
        """Lookups that had to embed."""
        return self._kept.misses

    def get(self, space: Fingerprint, text: str) -> list[float] | None:
        """The vector stored for ``text`` in ``space`` (now the most recent), or ``None``."""
        found = self._kept.get((space, text))
        return None if found is None else found.tolist()

    def put(self, space: Fingerprint, text: str, vector: list[float]) -> None:
        """Remember ``vector`` for ``text`` in ``space``, forgetting the least recent past the size."""
        self._kept.put((space, text), array("d", vector))

    def __len__(self) -> int:
        return len(self._kept)
