"""memu-embed-local: offline embeddings for memu with a sentence-transformers model.

Importing this package is cheap: torch and sentence-transformers load on the first embedding.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LocalEmbedder"]

# Resolved on first use: the plugin entry point imports this package, and `memu --help` or a
# per-turn retrieve must not pay for the implementation modules (or what they import).
_LAZY = {
    "LocalEmbedder": "memu_embed_local.embedder",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
