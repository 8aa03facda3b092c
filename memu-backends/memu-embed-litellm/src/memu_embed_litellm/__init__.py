"""memu-embed-litellm: remote embedding providers for memu through litellm.

Importing this package is cheap: litellm itself loads on the first embedding request.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LitellmEmbedder"]

# Resolved on first use: the plugin entry point imports this package, and `memu --help` or a
# per-turn retrieve must not pay for the implementation modules (or what they import).
_LAZY = {
    "LitellmEmbedder": "memu_embed_litellm.embedder",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
