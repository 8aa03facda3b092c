"""Alembic environment for the memu Postgres store.

memu runs migrations programmatically (:mod:`memu_backend_postgres.migrate`): it hands over an
open connection, already holding the migration advisory lock, in ``config.attributes``. The
revisions are hand-written SQL (the vector columns have no fixed dimension, which autogenerate
cannot express), so there is no target metadata and no offline mode.
"""

from __future__ import annotations

from alembic import context

from memu_backend_postgres._schema import VERSION_TABLE

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable through the plain alembic CLI
    raise RuntimeError("run memu's migrations with `memu db upgrade`, not the alembic command")

context.configure(connection=connection, target_metadata=None, version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()
