"""The ``memu`` entry point of memu-embed-litellm: registers :class:`LitellmEmbedder`.

Imports nothing heavy; memu loads this module whenever it lists or loads plugins.
"""

from __future__ import annotations

from memu_core import hookimpl
from memu_core.interfaces import Embedder
from memu_embed_litellm.embedder import LitellmEmbedder


@hookimpl
def memu_register_embedders() -> list[type[Embedder]]:
    """Register the ``litellm`` embedder (every remote provider goes through it)."""
    return [LitellmEmbedder]
