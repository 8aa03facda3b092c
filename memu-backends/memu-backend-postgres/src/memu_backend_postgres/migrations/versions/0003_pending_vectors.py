"""Pending vectors: a commit's segment vectors wait outside the HNSW graph until folded in.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

Linking a vector into pgvector's HNSW graph costs 2-4 ms of server CPU, 95% of a commit with
vectors (ADR 0028). A commit now writes each new segment vector into ``memu_pending_vectors``
(with the scope columns a search filters on) and leaves the segment's ``fp_id``/``embedding``
empty, so the partial HNSW index (``WHERE fp_id = n``) does not see it; a dense search scans the
pending rows exactly beside the index query, and a fold moves them into the segment rows in
bounded batches after the commit (see docs/adr/0029-deferred-hnsw-inserts.md).

A table of its own rather than columns of ``memu_segments``: a 384-dimension segment row with its
vector is about 2.2 kB, past the 2 kB at which Postgres moves a value out to TOAST, and the exact
scan then spent two thirds of its time fetching vectors back (65 ms against 21 ms for 20,000
rows); keeping the segment rows' vectors inline instead made every lexical search read a heap
three times larger (a hybrid retrieve 207 ms against 90 ms). The narrow rows here stay inline
(up to a full page, about 2,000 dimensions), and the HNSW indexes are left as they are.
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_UP = [
    """
    CREATE TABLE memu_pending_vectors (
        id        text PRIMARY KEY REFERENCES memu_segments (id) ON DELETE CASCADE,
        fp_id     integer NOT NULL REFERENCES memu_fingerprints (id),
        user_id   text NOT NULL,
        agent_id  text NOT NULL,
        track     text NOT NULL,
        embedding vector NOT NULL
    ) WITH (toast_tuple_target = 8160)
    """,
    "CREATE INDEX memu_pending_vectors_fp ON memu_pending_vectors (fp_id)",
]

_DOWN = [
    # Fold whatever still waits, so going back loses no vector (the old code reads only fp_id).
    """
    UPDATE memu_segments s SET fp_id = p.fp_id, embedding = p.embedding
    FROM memu_pending_vectors p WHERE p.id = s.id
    """,
    "DROP TABLE memu_pending_vectors",
]


def upgrade() -> None:
    """Create the pending-vector table and its index."""
    for statement in _UP:
        op.execute(statement)


def downgrade() -> None:
    """Fold the pending vectors into the graph and drop the table."""
    for statement in _DOWN:
        op.execute(statement)
