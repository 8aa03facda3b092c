"""memu-embed-litellm: remote embedding providers for memu through litellm.

Importing this package is cheap: litellm itself loads on the first embedding request.
"""

from __future__ import annotations

from memu_embed_litellm.embedder import LitellmEmbedder

__all__ = ["LitellmEmbedder"]
