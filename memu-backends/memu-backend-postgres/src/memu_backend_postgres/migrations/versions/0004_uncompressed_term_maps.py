"""Term-frequency maps stored uncompressed, so lexical scoring reads them without inflating.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04

A lexical search scores each candidate row by looking its query terms up in the row's ``tf``
map. A 384-dimension segment row with its vector inline is just over the 2 kB at which Postgres
starts shrinking a row, and the first thing it shrank was ``tf`` (the largest compressible
value; the vector is stored uncompressed): 99.99% of the maps in a 100,000-segment store were
pglz-compressed, and every term lookup decompressed the whole map again, about half the cost of
a search (ADR 0033). With ``tf`` in ``EXTERNAL`` storage (never compressed, moved out of line
only when a row is still too large) Postgres moves the vector out of line instead: the maps are
read as they are, and the heap a lexical search walks halves (about 0.7 kB a row instead of
1.4 kB). A dense search reads the vectors from the HNSW index; only its result rows fetch their
vector back for the score.

Only the storage setting changes, which takes no time: rows written from now on are stored the
new way, rows already stored keep their compressed maps until a commit rewrites them (rewriting
them all here would re-insert every row into the HNSW index, minutes at 100,000 segments).
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_TABLES = ("memu_segments", "memu_resources")


def upgrade() -> None:
    """Store the term maps uncompressed from now on."""
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN tf SET STORAGE EXTERNAL")


def downgrade() -> None:
    """Back to the default storage (compressible, out of line as a last resort)."""
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN tf SET STORAGE EXTENDED")
