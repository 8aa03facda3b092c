"""memu's Postgres + pgvector store (``MEMU_DB=postgresql://user:pass@host/db``).

Public names: :class:`PostgresStore` and the schema commands :func:`upgrade` and
:func:`current`. Importing this package loads no database library.
"""

from __future__ import annotations

from memu_backend_postgres.migrate import current, upgrade
from memu_backend_postgres.store import PostgresStore

__all__ = ["PostgresStore", "current", "upgrade"]
