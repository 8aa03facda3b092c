"""The ``memu`` entry point of memu-embed-local: registers :class:`LocalEmbedder`.

Imports nothing heavy; memu loads this module whenever it lists or loads plugins.
"""

from __future__ import annotations

from memu_core import hookimpl
from memu_core.interfaces import Embedder
from memu_embed_local.embedder import LocalEmbedder


@hookimpl
def memu_register_embedders() -> list[type[Embedder]]:
    """Register the ``local`` embedder."""
    return [LocalEmbedder]
