"""alembic environment for the sqlite store.

:mod:`memu_core._stores.sqlite.migrate` hands over an open connection (already inside a
``BEGIN IMMEDIATE`` transaction) through ``config.attributes["connection"]``; there is no ini
file and no URL to parse.
"""

from __future__ import annotations

from typing import Any

from alembic import context

from memu_core._stores.sqlite.schema import UNMODELLED, metadata


def _include_name(name: str | None, type_: str, parent_names: Any) -> bool:
    # The FTS5 virtual tables and their shadow tables are managed by raw SQL in the revisions.
    return not (type_ == "table" and name is not None and name.startswith(UNMODELLED))


def run() -> None:
    """Run the pending revisions on the handed-over connection."""
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("memu's sqlite migrations run through memu_core._stores.sqlite.migrate")
    context.configure(
        connection=connection,
        target_metadata=metadata,
        include_name=_include_name,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run()
