"""Each term's shortest row, kept beside its highest frequency.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04

A row holding one query term scores at most ``idf * (k1 + 1) * tfmax / (tfmax + k)``, where
``k`` grows with the row's length. Revision ``0005`` bounded ``k`` by the shortest possible row
(one word); the shortest row that has ever held the term (``dlmin``, in words) is a bound as
safe and much tighter (lines are rarely one word): on the benchmark's store the ceiling of
``billing`` falls from 5.06 to 4.64 against an answer cut of 5.21, and ``cache`` (4.54 to 4.34
against 4.38) becomes prunable at all (ADR 0033, amendment). ``dlmin`` only ever shrinks (a
delete leaves it), so it stays a lower bound without being recomputed.

The column is filled from the rows already stored in one read-only pass, like ``0005``.
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``memu_terms.dlmin`` (1 until known: every row holding a term has a word) and fill it."""
    op.execute("ALTER TABLE memu_terms ADD COLUMN dlmin integer NOT NULL DEFAULT 1")
    for kind, table in (("s", "memu_segments"), ("r", "memu_resources")):
        op.execute(
            f"UPDATE memu_terms t SET dlmin = greatest(m.dlmin, 1) FROM ("
            f"SELECT e.term, min(x.ntokens) AS dlmin FROM {table} x, jsonb_object_keys(x.tf) e(term) "
            f"GROUP BY e.term) m WHERE t.kind = '{kind}' AND t.term = m.term"
        )


def downgrade() -> None:
    """Drop the column."""
    op.execute("ALTER TABLE memu_terms DROP COLUMN dlmin")
