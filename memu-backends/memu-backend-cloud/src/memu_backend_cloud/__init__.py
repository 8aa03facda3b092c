"""memu cloud backend: an AgenticMemoryBackend that talks to a v4 memory API (memU's hosted one
or a self-hosted ``memu-server``). Select it with ``MEMU_MEMORY_MODE=cloud``."""

from __future__ import annotations

from typing import Any

__all__ = ["CloudBackend"]

# Resolved on first use: the plugin entry point imports this package, and `memu --help` or a
# per-turn retrieve must not pay for the implementation modules (or what they import).
_LAZY = {
    "CloudBackend": "memu_backend_cloud.backend",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
