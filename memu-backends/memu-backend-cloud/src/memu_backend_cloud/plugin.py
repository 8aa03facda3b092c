"""Entry point of memu-backend-cloud in the ``memu`` group: registers the ``cloud`` backend."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookimpl

if TYPE_CHECKING:
    from memu_core.interfaces import AgenticMemoryBackend


@hookimpl
def memu_register_backends() -> list[type[AgenticMemoryBackend]]:
    """The ``cloud`` backend (``MEMU_MEMORY_MODE=cloud``). httpx loads when it is built."""
    from memu_backend_cloud.backend import CloudBackend

    return [CloudBackend]
