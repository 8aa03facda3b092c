"""Initial schema: files, segments, resources, vectors, meta, FTS5 indexes and cleanup triggers.

Revision ID: 0001
Revises:
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# The FTS tables hold normalise()d text written by the store (casefolded, accents stripped),
# so they are ordinary FTS5 tables keyed by the owner's ``seq``. Deletes are left to triggers
# so that a cascade from ``files`` also clears the index and the vectors in the same transaction.
_RAW_UP = [
    # ``tag`` holds one constant word in every row: a cheap "match any row" for the query planner
    # in memu_core._stores.sqlite.lexical (weight 0, so it never changes a score).
    """CREATE VIRTUAL TABLE segments_fts USING fts5(
        text, context, tag, tokenize = 'unicode61 remove_diacritics 2')""",
    """CREATE VIRTUAL TABLE resources_fts USING fts5(
        path, description, tokenize = 'unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER segments_after_delete AFTER DELETE ON segments BEGIN
        DELETE FROM segments_fts WHERE rowid = old.seq;
        DELETE FROM vectors WHERE owner_kind = 'segment' AND owner_id = old.id;
    END""",
    """CREATE TRIGGER resources_after_delete AFTER DELETE ON resources BEGIN
        DELETE FROM resources_fts WHERE rowid = old.seq;
        DELETE FROM vectors WHERE owner_kind = 'resource' AND owner_id = old.id;
    END""",
    "INSERT INTO meta (key, value) VALUES ('generation', '0')",
]


def upgrade() -> None:
    """Create every table, index, FTS table and trigger of the first schema."""
    op.create_table(
        "files",
        sa.Column("id", sa.Text(), primary_key=True),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("track", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.Text(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.UniqueConstraint("user_id", "agent_id", "track", "name", name="uq_files_scope_track_name"),
    )
    op.create_index("ix_files_paging", "files", ["track", "name", "id"])
    op.create_table(
        "segments",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("id", sa.Text(), nullable=False, unique=True),
        sa.Column("file_id", sa.Text(), sa.ForeignKey("files.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("track", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("context", sa.Text(), nullable=False),
    )
    op.create_index("ix_segments_file_id", "segments", ["file_id"])
    op.create_table(
        "resources",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("id", sa.Text(), nullable=False, unique=True),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.UniqueConstraint("user_id", "agent_id", "path", name="uq_resources_scope_path"),
    )
    op.create_table(
        "vectors",
        sa.Column("owner_kind", sa.Text(), nullable=False),
        sa.Column("owner_id", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("vector", sa.BLOB(), nullable=False),
        sa.PrimaryKeyConstraint("owner_kind", "owner_id", "fingerprint", name="pk_vectors"),
    )
    op.create_index("ix_vectors_fingerprint", "vectors", ["fingerprint", "owner_kind"])
    op.create_table(
        "meta",
        sa.Column("key", sa.Text(), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    for statement in _RAW_UP:
        op.execute(statement)


def downgrade() -> None:
    """Drop everything the upgrade created."""
    for name in ("segments_after_delete", "resources_after_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    for name in ("segments_fts", "resources_fts"):
        op.execute(f"DROP TABLE IF EXISTS {name}")
    for name in ("vectors", "segments", "resources", "files", "meta"):
        op.drop_table(name)
