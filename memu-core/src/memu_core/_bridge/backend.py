"""How the host commands reach the configured backend (imported only inside commands)."""

from __future__ import annotations

from memu_core.interfaces import AgenticMemoryBackend


def open_backend() -> AgenticMemoryBackend:
    """The backend ``~/.memu/config.env`` selects: the local engine or the cloud client."""
    from memu_core._compose import open_backend as _open

    backend: AgenticMemoryBackend = _open()
    return backend
