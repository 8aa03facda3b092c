"""Schema migrations for the Postgres store: ``upgrade(url)`` and ``current(url)``.

The CLI mounts these as ``memu db upgrade`` and ``memu db current``; :meth:`PostgresStore.open`
calls :func:`ensure_schema` so a fresh database needs no separate step. Upgrades run under a
``pg_advisory_lock``: when several processes start against an empty database at once, one
migrates and the others wait, then find the schema at head and carry on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memu_backend_postgres._schema import HEAD_REVISION, MIGRATION_LOCK_KEY, VERSION_TABLE
from memu_backend_postgres._url import normalise_url

__all__ = ["HEAD_REVISION", "current", "ensure_schema", "upgrade"]

_SCRIPTS = Path(__file__).with_name("migrations")


def _alembic_config(connection: Any) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    # The connection is handed over directly, so the URL (and its password) never enters the
    # ConfigParser, which would also choke on a percent-encoded password.
    config.attributes["connection"] = connection
    return config


def _revision(connection: Any) -> str | None:
    import sqlalchemy as sa

    exists = connection.execute(sa.text("SELECT to_regclass(:t) IS NOT NULL"), {"t": VERSION_TABLE}).scalar()
    if not exists:
        return None
    return connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()  # type: ignore[no-any-return]


def ensure_schema(engine: Any) -> str:
    """Bring the database behind ``engine`` to head; return the revision it is now at.

    Fast path: one query when the schema is already current. Otherwise the migration lock is
    taken and the revision re-read under it, so only the first of several racing processes runs
    the upgrade.
    """
    import sqlalchemy as sa

    with engine.connect() as connection:
        found = _revision(connection)
        connection.rollback()
        if found == HEAD_REVISION:
            return found
        connection.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        connection.commit()
        try:
            if _revision(connection) != HEAD_REVISION:
                connection.rollback()
                from alembic import command

                command.upgrade(_alembic_config(connection), "head")
                connection.commit()
            else:
                connection.rollback()
        finally:
            connection.rollback()
            connection.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
            connection.commit()
    return HEAD_REVISION


def _with_engine(url: str, action: str, work: Any) -> Any:
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    from memu_backend_postgres._engine import translated

    target = normalise_url(url)
    with translated(target, action):
        engine = sa.create_engine(target, poolclass=NullPool, hide_parameters=True)
        try:
            return work(engine)
        finally:
            engine.dispose()


def upgrade(url: str) -> str:
    """Migrate the database at ``url`` to head (idempotent); return the head revision."""
    return _with_engine(url, "migrating the schema", ensure_schema)  # type: ignore[no-any-return]


def current(url: str) -> str | None:
    """The schema revision of the database at ``url``; ``None`` for a database memu never used."""

    def read(engine: Any) -> str | None:
        with engine.connect() as connection:
            return _revision(connection)

    return _with_engine(url, "reading the schema revision", read)  # type: ignore[no-any-return]
