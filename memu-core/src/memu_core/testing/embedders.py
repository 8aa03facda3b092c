"""An in-process :class:`Embedder` for engine tests: deterministic, countable, breakable.

It computes the same hashed bag-of-words vectors as :mod:`memu_core.testing.embedding_server`,
so shared words mean nearby vectors. It exists for tests that must count or fail embedding
calls exactly (``commit`` makes one call; a failing call leaves the store unchanged); tests of
real embedding quality use the MiniLM model or the HTTP server instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from memu_core.errors import EmbeddingError
from memu_core.interfaces import Embedder
from memu_core.testing.embedding_server import hashed_vector
from memu_core.types import Fingerprint


class HashingEmbedder(Embedder):
    """Hashed bag-of-words vectors; ``calls`` counts ``embed`` calls, ``texts`` what was sent."""

    name: ClassVar[str] = "hashing"

    def __init__(self, *, model: str = "hash-64", dimension: int = 64) -> None:
        self._fp = Fingerprint("hashing", model, dimension)
        self.calls = 0
        self.texts: list[str] = []
        self.fail_with: Exception | None = None

    @classmethod
    def from_settings(cls, settings: Any) -> HashingEmbedder:
        """Build with defaults (settings are ignored)."""
        return cls()

    @property
    def fingerprint(self) -> Fingerprint:
        """(hashing, model, dimension)."""
        return self._fp

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts``; raises ``fail_with`` (an EmbeddingError by default) when set."""
        if not texts:
            return []
        self.calls += 1
        self.texts.extend(texts)
        if self.fail_with is not None:
            raise self.fail_with
        return [hashed_vector(text, self._fp.dimension) for text in texts]


def failing(message: str = "provider unavailable") -> EmbeddingError:
    """The error a :class:`HashingEmbedder` raises once told to fail."""
    return EmbeddingError(message)
