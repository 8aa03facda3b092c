"""Entry point of memu-backend-cloud in the ``memu`` group: registers the ``cloud`` backend."""

from __future__ import annotations

from typing import Any

from memu_core import hookimpl


@hookimpl
def memu_register_backends() -> list[type[Any]]:
    """The ``cloud`` backend (``MEMU_MEMORY_MODE=cloud``). httpx loads when it is built."""
    from memu_backend_cloud.backend import CloudBackend

    return [CloudBackend]
