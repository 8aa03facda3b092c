"""A disk cache in front of a real :class:`Embedder`, for benchmarks that re-run the same texts.

Retrieval-quality runs embed the same few thousand dialogue turns every time; on two CPU cores
MiniLM needs minutes for that. The cache stores each vector under (fingerprint, sha256(text)) in
a SQLite file, so a second run measures ranking, not the model. Timing benchmarks never use it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class CachedEmbedder(Embedder):
    """Wraps ``inner``; ``computed`` counts texts the model really embedded."""

    name: ClassVar[str] = "cached"

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.computed = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (fp TEXT, key TEXT, v BLOB, PRIMARY KEY (fp, key))")
        fp = inner.fingerprint
        self._fp = f"{fp.provider}/{fp.model}/{fp.dimension}"

    @classmethod
    def from_settings(cls, settings: Any) -> CachedEmbedder:
        """Not built from settings: benchmarks wrap an embedder they already hold."""
        raise NotImplementedError("CachedEmbedder wraps an embedder; build it directly")

    @property
    def fingerprint(self) -> Fingerprint:
        """The wrapped embedder's fingerprint (cached vectors are in its space)."""
        return self.inner.fingerprint

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Cached vectors where known; one batched call to the model for the rest."""
        if not texts:
            return []
        keys = [_key(t) for t in texts]
        dim = self.inner.fingerprint.dimension
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            rows = self._db.execute(
                f"SELECT key, v FROM vec WHERE fp = ? AND key IN ({','.join('?' * len(part))})",
                (self._fp, *part),
            )
            found.update((k, list(struct.unpack(f"{dim}f", v))) for k, v in rows)
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        if missing:
            vectors = self.inner.embed(missing)
            self.computed += len(missing)
            rows_out = []
            for text, vec in zip(missing, vectors, strict=True):
                found[_key(text)] = vec
                rows_out.append((self._fp, _key(text), struct.pack(f"{dim}f", *vec)))
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)", rows_out)
        return [found[k] for k in keys]
