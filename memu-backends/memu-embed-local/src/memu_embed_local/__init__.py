"""memu-embed-local: offline embeddings for memu with a sentence-transformers model.

Importing this package is cheap: torch and sentence-transformers load on the first embedding.
"""

from __future__ import annotations

from memu_embed_local.embedder import LocalEmbedder

__all__ = ["LocalEmbedder"]
