"""The lexical GIN indexes insert directly into their posting trees (``fastupdate`` off).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04

With Postgres's default, rows a commit writes are added to a GIN index's unsorted pending list
until it reaches ``gin_pending_list_limit`` (4 MB) or a vacuum merges it, and every search
reads the whole list before the index proper. On a 100,000-segment store, right after a
1,000-file commit a lexical search cost about 21 ms of server CPU instead of 12.5 ms with the
entries merged; how much a search paid depended on how much had been written since the last
vacuum. Without the list, a commit inserts each entry where it belongs (0.5 s more of server
CPU for those 1,000 files, the same wall time), and a search costs the same whatever was
written before it (ADR 0033, amendment).

The entries already pending are merged here; that reads and writes only the list.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_INDEXES = ("memu_segments_tsv", "memu_resources_tsv")


def upgrade() -> None:
    """Turn the pending list off and merge what it holds."""
    for index in _INDEXES:
        op.execute(f"ALTER INDEX {index} SET (fastupdate = off)")
        op.execute(f"SELECT gin_clean_pending_list('{index}'::regclass)")


def downgrade() -> None:
    """Back to Postgres's default."""
    for index in _INDEXES:
        op.execute(f"ALTER INDEX {index} RESET (fastupdate)")
