"""Entry point of ``memu-backend-postgres``: registers the ``postgres`` store.

Loaded by memu's plugin manager; it imports only the light store class (no driver, no ORM).
"""

from __future__ import annotations

from memu_backend_postgres.store import PostgresStore
from memu_core import hookimpl
from memu_core.interfaces import MemoryStore


@hookimpl
def memu_register_stores() -> list[type[MemoryStore]]:
    """Contribute :class:`PostgresStore` (``MEMU_DB=postgresql://…``)."""
    return [PostgresStore]
