"""Vector change log: which owners' vectors changed, so a warm dense index catches up in place.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

Every insert into or delete from ``vectors`` appends one row to ``vector_changes`` through a
trigger, in the writer's own transaction: whatever writes the file (this process, another one,
a cascade from ``files``) is logged, and a rolled-back write leaves nothing. A process holding
a dense index reads the rows after the position it last saw and patches its index instead of
loading every vector again (docs/adr/0031-warm-dense-index-across-writes.md).

``meta.vector_changes_from`` is the log's horizon: an index positioned before it cannot catch
up (rows were pruned, or a vector was updated in place) and is loaded again. Existing stores
start with an empty log; an index built after the upgrade starts at its end.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_LOG = (
    "INSERT INTO vector_changes (owner_kind, owner_id, fingerprint) "
    "VALUES ({0}.owner_kind, {0}.owner_id, {0}.fingerprint)"
)

_RAW_UP = [
    # INSERT OR REPLACE fires only the insert trigger (recursive triggers are off): one row per
    # owner changed is all a reader needs, it re-reads the owner's current vector.
    f"CREATE TRIGGER vectors_log_insert AFTER INSERT ON vectors BEGIN {_LOG.format('new')}; END",
    f"CREATE TRIGGER vectors_log_delete AFTER DELETE ON vectors BEGIN {_LOG.format('old')}; END",
    # memu never updates a vector in place; if anything does, the row keeps its place in the
    # table, which a patched index cannot mirror, so every index is loaded again.
    f"""CREATE TRIGGER vectors_log_update AFTER UPDATE ON vectors BEGIN
        {_LOG.format("old")};
        {_LOG.format("new")};
        INSERT INTO meta (key, value) VALUES ('vector_changes_from', (SELECT max(seq) FROM vector_changes))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    END""",
    "INSERT INTO meta (key, value) VALUES ('vector_changes_from', '0')",
]


def upgrade() -> None:
    """Create the log table and the three triggers that fill it."""
    op.create_table(
        "vector_changes",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("owner_kind", sa.Text(), nullable=False),
        sa.Column("owner_id", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
    )
    for statement in _RAW_UP:
        op.execute(statement)


def downgrade() -> None:
    """Drop the triggers, the log and its horizon."""
    for name in ("vectors_log_insert", "vectors_log_delete", "vectors_log_update"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_table("vector_changes")
    op.execute("DELETE FROM meta WHERE key = 'vector_changes_from'")
