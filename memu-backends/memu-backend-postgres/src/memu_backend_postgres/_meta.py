"""The writers' lock, the generation counter and fingerprint bookkeeping (``memu_meta``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memu_backend_postgres._schema import WRITER_LOCK_KEY, resource_index, segment_index
from memu_core.types import Fingerprint


@dataclass(frozen=True, slots=True)
class Live:
    """The live fingerprint as stored: its row id and identity (both ``None`` when unset)."""

    fp_id: int | None
    fingerprint: Fingerprint | None


_LIVE_SQL = """
    SELECT m.generation, m.live_fp_id, f.provider, f.model, f.dimension
    FROM memu_meta m LEFT JOIN memu_fingerprints f ON f.id = m.live_fp_id
    WHERE m.id = 1
"""


def _live(row: Any) -> Live:
    if row.live_fp_id is None:
        return Live(None, None)
    return Live(row.live_fp_id, Fingerprint(row.provider, row.model, row.dimension))


def read_live(conn: Any) -> Live:
    """The live fingerprint, read without locking."""
    import sqlalchemy as sa

    return _live(conn.execute(sa.text(_LIVE_SQL)).one())


def join_writers(conn: Any, offered: Fingerprint | None) -> Live:
    """Start a write that may run beside other writes; return the live state it must use.

    Writers share a transaction-scoped advisory lock, which only :func:`exclude_writers` (a
    fingerprint switch, or the first vectors a store ever gets, which create its HNSW indexes)
    takes exclusively; so the live fingerprint cannot change under a write, and writes to
    different files never wait for each other. Rows they share (a file, the BM25 statistics)
    are locked row by row (ADR 0028).
    """
    import sqlalchemy as sa

    if offered is not None and read_live(conn).fingerprint is None:
        # The first vectors: making a fingerprint live creates indexes, which must not race.
        return exclude_writers(conn)
    conn.execute(sa.text("SELECT pg_advisory_xact_lock_shared(:k, hashtext(current_schema()))"), {"k": WRITER_LOCK_KEY})
    live = read_live(conn)  # READ COMMITTED: this statement sees a switch that committed meanwhile
    if offered is not None and live.fingerprint is None:  # pragma: no cover - no switch unsets it
        return exclude_writers(conn)
    return live


def exclude_writers(conn: Any) -> Live:
    """Wait for every running write to finish and keep new ones out until this transaction ends."""
    import sqlalchemy as sa

    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k, hashtext(current_schema()))"), {"k": WRITER_LOCK_KEY})
    return read_live(conn)


def bump_generation(conn: Any) -> None:
    """Record that this transaction changed the store."""
    import sqlalchemy as sa

    conn.execute(sa.text("UPDATE memu_meta SET generation = generation + 1 WHERE id = 1"))


def fingerprint_id(conn: Any, fingerprint: Fingerprint) -> int:
    """The row id of ``fingerprint``, inserting it on first sight."""
    import sqlalchemy as sa

    params = {"p": fingerprint.provider, "m": fingerprint.model, "d": fingerprint.dimension}
    conn.execute(
        sa.text(
            "INSERT INTO memu_fingerprints (provider, model, dimension) VALUES (:p, :m, :d) "
            "ON CONFLICT (provider, model, dimension) DO NOTHING"
        ),
        params,
    )
    return int(
        conn.execute(
            sa.text("SELECT id FROM memu_fingerprints WHERE provider = :p AND model = :m AND dimension = :d"),
            params,
        ).scalar_one()
    )


def make_live(conn: Any, fp_id: int, dimension: int) -> None:
    """Record ``fp_id`` as live and make sure its HNSW indexes exist.

    One partial expression index per fingerprint: the column is untyped ``vector`` because the
    dimension is unknown until the first vector arrives, and the cast gives HNSW the fixed
    dimension it needs. ``fp_id`` and ``dimension`` are integers from our own table, so
    splicing them into DDL is safe (DDL takes no bind parameters).
    """
    import sqlalchemy as sa

    for table, name in (("memu_segments", segment_index(fp_id)), ("memu_resources", resource_index(fp_id))):
        conn.execute(
            sa.text(
                f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw "
                f"((embedding::vector({int(dimension)})) vector_cosine_ops) WHERE fp_id = {int(fp_id)}"
            )
        )
    conn.execute(sa.text("UPDATE memu_meta SET live_fp_id = :f WHERE id = 1"), {"f": fp_id})


def drop_indexes(conn: Any, fp_id: int) -> None:
    """Drop the HNSW indexes of a fingerprint that is no longer live."""
    import sqlalchemy as sa

    for name in (segment_index(fp_id), resource_index(fp_id)):
        conn.execute(sa.text(f"DROP INDEX IF EXISTS {name}"))
