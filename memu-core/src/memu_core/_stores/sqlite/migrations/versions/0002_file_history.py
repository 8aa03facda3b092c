"""File history: who wrote each file's current version, and the past versions of every file.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03

``files`` gains ``action`` and ``actor`` (what and who made the current version; files written
before this revision read ``commit`` by ``before history``), and ``file_versions`` keeps past
versions keyed by (scope, track, name, version). Adding columns with a constant default is a
schema-only change in SQLite: no row of a large store is rewritten.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two provenance columns and the version table."""
    with op.batch_alter_table("files", recreate="never") as batch:
        batch.add_column(sa.Column("action", sa.Text(), nullable=False, server_default="commit"))
        batch.add_column(sa.Column("actor", sa.Text(), nullable=False, server_default="before history"))
    op.create_table(
        "file_versions",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("track", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.UniqueConstraint("user_id", "agent_id", "track", "name", "version", name="uq_file_versions_key"),
    )
    op.create_index("ix_file_versions_created", "file_versions", ["created_at"])


def downgrade() -> None:
    """Drop the version table and the provenance columns."""
    op.drop_index("ix_file_versions_created", table_name="file_versions")
    op.drop_table("file_versions")
    with op.batch_alter_table("files") as batch:
        batch.drop_column("actor")
        batch.drop_column("action")
