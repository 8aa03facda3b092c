"""The ``sqlite`` store, memu's default: one file, FTS5 for words, faiss for vectors.

Import-light on purpose: the store itself runs on the stdlib ``sqlite3`` module, and only
schema creation or upgrade (:mod:`.migrate`) imports SQLAlchemy and alembic.
"""

from __future__ import annotations

from memu_core._stores.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
