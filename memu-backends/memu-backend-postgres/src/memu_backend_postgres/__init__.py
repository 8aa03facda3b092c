"""memu's Postgres + pgvector store (``MEMU_DB=postgresql://user:pass@host/db``).

Public names: :class:`PostgresStore` and the schema commands :func:`upgrade` and
:func:`current`. Importing this package loads no database library.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PostgresStore", "current", "upgrade"]

# Resolved on first use: the plugin entry point imports this package, and `memu --help` or a
# per-turn retrieve must not pay for the implementation modules (or what they import).
_LAZY = {
    "current": "memu_backend_postgres.migrate",
    "upgrade": "memu_backend_postgres.migrate",
    "PostgresStore": "memu_backend_postgres.store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
