"""Default values shared by the resolver, the settings model and the ``init``/``config`` verbs."""

from __future__ import annotations

DEFAULT_CLOUD_BASE_URL = "https://api.memu.so/api/v4/memory/"
"""memU Cloud's v4 memory API; ``MEMU_CLOUD_BASE_URL`` points elsewhere (a ``memu-server``)."""
