"""Pending vectors: a commit's segment vectors wait outside the HNSW graph until folded in.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

Linking a vector into pgvector's HNSW graph costs 2-4 ms of server CPU, 95% of a commit with
vectors (ADR 0028). A commit now writes each new segment vector into ``pending_embedding``
(with its fingerprint in ``pending_fp``) and leaves ``fp_id``/``embedding`` empty, so the
partial HNSW index (``WHERE fp_id = n``) does not see the row; a dense search scans the pending
rows exactly beside the index query, and a fold moves them into ``fp_id``/``embedding`` in
bounded batches after the commit (see docs/adr/0029-deferred-hnsw-inserts.md).

The HNSW indexes keep their predicate, so upgrading a store does not rebuild its graph: the new
columns are nullable without a default (no table rewrite), and the only scans are the check
constraint's validation and the (empty) partial index over pending rows. New rows keep their
vectors inline (``toast_tuple_target``), which the pending scan reads three times faster.
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_UP = [
    "ALTER TABLE memu_segments ADD COLUMN pending_fp integer REFERENCES memu_fingerprints (id)",
    "ALTER TABLE memu_segments ADD COLUMN pending_embedding vector",
    # A row holds at most one vector: either linked into the graph or waiting to be.
    """
    ALTER TABLE memu_segments ADD CONSTRAINT memu_segments_pending_vector
        CHECK ((pending_fp IS NULL) = (pending_embedding IS NULL) AND (pending_fp IS NULL OR fp_id IS NULL))
    """,
    "CREATE INDEX memu_segments_pending ON memu_segments (pending_fp) WHERE pending_fp IS NOT NULL",
    # Keep a row's vector in the row (up to a full page) instead of TOAST, which moves any
    # value out once a row passes 2 kB: a 384-dimension row is about 2.2 kB, and the exact scan
    # of pending rows spent two thirds of its time fetching their vectors back from TOAST
    # (65 ms against 21 ms for 20,000 rows, measured). Rows written before keep their layout.
    "ALTER TABLE memu_segments SET (toast_tuple_target = 8160)",
]

_DOWN = [
    "ALTER TABLE memu_segments RESET (toast_tuple_target)",
    # Fold whatever still waits, so going back loses no vector (the old code reads only fp_id).
    """
    UPDATE memu_segments SET fp_id = pending_fp, embedding = pending_embedding,
        pending_fp = NULL, pending_embedding = NULL
    WHERE pending_fp IS NOT NULL
    """,
    "DROP INDEX memu_segments_pending",
    "ALTER TABLE memu_segments DROP CONSTRAINT memu_segments_pending_vector",
    "ALTER TABLE memu_segments DROP COLUMN pending_embedding",
    "ALTER TABLE memu_segments DROP COLUMN pending_fp",
]


def upgrade() -> None:
    """Add the pending columns, their constraint and the partial index that finds them."""
    for statement in _UP:
        op.execute(statement)


def downgrade() -> None:
    """Fold the pending vectors into the graph and drop the columns again."""
    for statement in _DOWN:
        op.execute(statement)
