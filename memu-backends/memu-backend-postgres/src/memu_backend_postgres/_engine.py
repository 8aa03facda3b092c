"""Engine creation and error translation (imports SQLAlchemy; load only from inside ``open``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memu_backend_postgres._pool import PoolOptions
from memu_backend_postgres._url import display_url, redact
from memu_core.errors import MemuError, StoreBusy, StoreError

RETRY_AFTER = 1.0
"""Seconds a caller is told to wait after :class:`StoreBusy` (a pool turns over in well under a
second; a restarting server takes a few)."""

# SQLSTATEs of a server that is going away or not accepting connections yet: class 08
# (connection exception), admin/crash shutdown, "the database system is starting up".
_UNAVAILABLE_STATES = ("57P01", "57P02", "57P03")


def create_engine(url: str, pool: PoolOptions | None = None) -> Any:
    """A pooled SQLAlchemy engine for ``url`` that registers pgvector's binary adapter."""
    import sqlalchemy as sa
    from sqlalchemy import event

    options = pool or PoolOptions()
    engine = sa.create_engine(
        url,
        # No ping per checkout (a round trip on every call): a connection that died with a
        # server restart fails its statement, SQLAlchemy drops it and every older one, and the
        # store reads once more on a fresh connection (PostgresStore._reading).
        pool_pre_ping=False,
        pool_size=options.size,
        max_overflow=options.max_overflow,
        pool_timeout=options.timeout,
        # Never let a URL (with its password) into SQLAlchemy's own log lines.
        hide_parameters=True,
    )

    @event.listens_for(engine, "connect")
    def _prepare(dbapi_connection: Any, _record: Any) -> None:
        from pgvector.psycopg import register_vector

        try:
            register_vector(dbapi_connection)
        except Exception:
            dbapi_connection.rollback()  # before the first migration: no vector type yet
            return
        _session_settings(dbapi_connection)

    return engine


def _session_settings(dbapi_connection: Any) -> None:
    """Search settings every pooled connection keeps, so a search needs no statement for them.

    ``ef_search`` is the HNSW candidate pool; with pgvector >= 0.8 an iterative scan keeps a
    narrow scope filter from coming back short. Parallel plans are off: a search scores a few
    thousand rows, where starting workers costs more than it saves, and concurrent requests
    need the cores. JIT compilation is off: a lexical search over a large store can be
    estimated past ``jit_above_cost`` (the scoring scan at 100,000 segments is at a seventh of
    it, and grows with the candidates) while it runs in milliseconds, and compiling it costs
    tens of them.
    """
    from memu_backend_postgres._search import EF_SEARCH

    with dbapi_connection.cursor() as cursor:
        version = cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        major_minor = tuple(int(p) for p in str(version[0] if version else "0.0").split(".")[:2])
        iterative = ", set_config('hnsw.iterative_scan', 'strict_order', false)" if major_minor >= (0, 8) else ""
        cursor.execute(
            f"SELECT set_config('hnsw.ef_search', '{int(EF_SEARCH)}', false), "
            f"set_config('max_parallel_workers_per_gather', '0', false), set_config('jit', 'off', false){iterative}"
        )
    dbapi_connection.commit()


def describe_error(exc: BaseException, url: str) -> str:
    """One line naming the store and the driver's complaint, with the password masked."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    return redact(f"postgres store {display_url(url)}: {first}", url)


@contextmanager
def translated(url: str, action: str, pool: PoolOptions | None = None) -> Iterator[None]:
    """Turn driver and SQLAlchemy failures into a one-line, password-free ``StoreError``.

    A pool that stays exhausted for its timeout, and a server that cannot be reached (down,
    restarting, a connection cut), become :class:`StoreBusy`: a server answers 503 with
    ``Retry-After`` and the caller may retry.
    """
    try:
        yield
    except MemuError as exc:
        # Already ours, but its text may quote the URL: mask before it travels further.
        exc.args = tuple(redact(str(a), url) if isinstance(a, str) else a for a in exc.args)
        raise
    except Exception as exc:
        import sqlalchemy.exc as sa_exc

        if isinstance(exc, sa_exc.TimeoutError):
            # SQLAlchemy's pool timeout: every connection stayed checked out for pool_timeout.
            busy = "every pooled connection" if pool is None else f"all {pool.most} pooled connections"
            waited = "" if pool is None else f" for {pool.timeout:g} s"
            raise StoreBusy(
                f"postgres store {display_url(url)}: {busy} stayed busy{waited} (while {action}); "
                "nothing was done, retry in a moment or raise pool_size / pool_timeout in MEMU_DB "
                "(e.g. ?pool_size=16&pool_timeout=5)",
                RETRY_AFTER,
            ) from None
        if isinstance(exc, sa_exc.SQLAlchemyError | _psycopg_error()):
            text = (
                f"{describe_error(exc, url)} (while {action}); check that the server is up and "
                "MEMU_DB names a reachable database you may write to"
            )
            if _unavailable(exc):
                raise StoreBusy(text, RETRY_AFTER) from None
            raise StoreError(text) from None
        raise


def _unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the server cannot be reached now (down, restarting, connection lost)."""
    import psycopg

    if getattr(exc, "connection_invalidated", False):
        return True
    orig = getattr(exc, "orig", None) or exc
    if not isinstance(orig, psycopg.OperationalError):
        return False
    state = getattr(orig, "sqlstate", None)
    # A failed connection attempt carries no SQLSTATE (libpq never reached a server).
    return state is None or state.startswith("08") or state in _UNAVAILABLE_STATES


def _psycopg_error() -> type[BaseException]:
    import psycopg

    return psycopg.Error
