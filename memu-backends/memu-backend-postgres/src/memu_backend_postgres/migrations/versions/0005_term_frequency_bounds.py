"""Each term's highest weighted frequency in any row, kept beside its document frequency.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04

A lexical search scores every candidate row on every query term. Most candidates of an OR of
required terms hold one term only, and such a row's score has a ceiling that depends on how
often the term can occur in a row: with the largest weighted frequency ``tfmax`` any row has
for it, the search can tell that no row holding only that term can reach its answer and leave
those rows unread (ADR 0033, amendment). ``tfmax`` only ever grows (a delete leaves it), so it
stays an upper bound without being recomputed.

The column is filled from the rows already stored: one pass over every row's term map, a few
seconds at 100,000 segments, reading only (no row is rewritten).
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``memu_terms.tfmax`` and fill it from the stored term maps."""
    op.execute("ALTER TABLE memu_terms ADD COLUMN tfmax double precision NOT NULL DEFAULT 0")
    for kind, table in (("s", "memu_segments"), ("r", "memu_resources")):
        op.execute(
            f"UPDATE memu_terms t SET tfmax = m.tfmax FROM ("
            f"SELECT e.key AS term, max(e.value::float8) AS tfmax FROM {table} x, jsonb_each_text(x.tf) e "
            f"GROUP BY e.key) m WHERE t.kind = '{kind}' AND t.term = m.term"
        )


def downgrade() -> None:
    """Drop the column."""
    op.execute("ALTER TABLE memu_terms DROP COLUMN tfmax")
