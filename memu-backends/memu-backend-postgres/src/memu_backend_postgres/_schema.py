"""Names shared by the migrations and the queries (stdlib only)."""

from __future__ import annotations

VERSION_TABLE = "memu_alembic_version"
"""Alembic's bookkeeping table; prefixed so memu can share a database with other applications."""

HEAD_REVISION = "0007"
"""The newest revision; ``open()`` compares against it before taking the migration lock."""

MIGRATION_LOCK_KEY = 0x6D656D75_7067
"""``pg_advisory_lock`` key held while migrating (``memu`` ``pg`` in ASCII), so concurrent
first starts run the migrations once and the others wait for them."""

WRITER_LOCK_KEY = 0x6D656D75
"""First ``pg_advisory_xact_lock`` key of the writers' lock (``memu``); the second is a hash of
the schema, so stores in different schemas of one database never wait for each other. Every
write holds it shared; a fingerprint switch holds it exclusively."""

FOLD_LOCK_KEY = 0x6D656D66
"""First ``pg_advisory_xact_lock`` key of the fold lock (``memf``, an int4); the second is a hash of
the schema. Held by each batch that links pending vectors into the HNSW graph, so concurrent
folds (two processes' background folders, ``memu db upgrade``) take turns (ADR 0029)."""

META_ROW = 1
"""The single row of ``memu_meta``; each write updates it last, just before it commits."""


def segment_index(fingerprint_id: int) -> str:
    """Name of the HNSW index over segment vectors of one fingerprint."""
    return f"memu_segments_hnsw_fp{fingerprint_id}"


def resource_index(fingerprint_id: int) -> str:
    """Name of the HNSW index over resource vectors of one fingerprint."""
    return f"memu_resources_hnsw_fp{fingerprint_id}"
