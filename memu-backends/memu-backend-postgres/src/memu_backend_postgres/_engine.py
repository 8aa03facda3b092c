"""Engine creation and error translation (imports SQLAlchemy; load only from inside ``open``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memu_backend_postgres._url import display_url, redact
from memu_core.errors import MemuError, StoreError


def create_engine(url: str) -> Any:
    """A pooled SQLAlchemy engine for ``url`` that registers pgvector's binary adapter."""
    import sqlalchemy as sa
    from sqlalchemy import event

    engine = sa.create_engine(
        url,
        pool_pre_ping=True,
        pool_size=2,
        max_overflow=4,
        # Never let a URL (with its password) into SQLAlchemy's own log lines.
        hide_parameters=True,
    )

    @event.listens_for(engine, "connect")
    def _register_vector(dbapi_connection: Any, _record: Any) -> None:
        from pgvector.psycopg import register_vector

        try:
            register_vector(dbapi_connection)
        except Exception:
            dbapi_connection.rollback()

    return engine


def describe_error(exc: BaseException, url: str) -> str:
    """One line naming the store and the driver's complaint, with the password masked."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    return redact(f"postgres store {display_url(url)}: {first}", url)


@contextmanager
def translated(url: str, action: str) -> Iterator[None]:
    """Turn driver and SQLAlchemy failures into a one-line, password-free ``StoreError``."""
    try:
        yield
    except MemuError as exc:
        # Already ours, but its text may quote the URL: mask before it travels further.
        exc.args = tuple(redact(str(a), url) if isinstance(a, str) else a for a in exc.args)
        raise
    except Exception as exc:
        import sqlalchemy.exc as sa_exc

        if isinstance(exc, sa_exc.SQLAlchemyError | _psycopg_error()):
            raise StoreError(
                f"{describe_error(exc, url)} (while {action}); check that the server is up and "
                "MEMU_DB names a reachable database you may write to"
            ) from None
        raise


def _psycopg_error() -> type[BaseException]:
    import psycopg

    return psycopg.Error
