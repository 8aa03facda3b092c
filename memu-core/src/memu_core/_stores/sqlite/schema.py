"""The store's tables as SQLAlchemy Core metadata: the target alembic compares revisions with.

Only migrations import this module (SQLAlchemy is too slow to import on the per-turn path).
The FTS5 tables and the cleanup triggers are raw SQL in the revisions: SQLAlchemy has no
model for virtual tables, so they are listed in :data:`UNMODELLED` and skipped by autogenerate.
"""

from __future__ import annotations

from sqlalchemy import (
    BLOB,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

files = Table(
    "files",
    metadata,
    Column("id", Text, primary_key=True),
    Column("user_id", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("track", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("revision", Integer, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Column("action", Text, nullable=False, server_default="commit"),
    Column("actor", Text, nullable=False, server_default="before history"),
    UniqueConstraint("user_id", "agent_id", "track", "name", name="uq_files_scope_track_name"),
)
Index("ix_files_paging", files.c.track, files.c.name, files.c.id)

# ``seq`` is an explicit INTEGER PRIMARY KEY (a rowid alias) because the FTS rows point at it and
# VACUUM may renumber an implicit rowid.
segments = Table(
    "segments",
    metadata,
    Column("seq", Integer, primary_key=True),
    Column("id", Text, nullable=False, unique=True),
    Column("file_id", Text, ForeignKey("files.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("track", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("ordinal", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("context", Text, nullable=False),
)
Index("ix_segments_file_id", segments.c.file_id)

resources = Table(
    "resources",
    metadata,
    Column("seq", Integer, primary_key=True),
    Column("id", Text, nullable=False, unique=True),
    Column("user_id", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("path", Text, nullable=False),
    Column("description", Text, nullable=True),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    UniqueConstraint("user_id", "agent_id", "path", name="uq_resources_scope_path"),
)

vectors = Table(
    "vectors",
    metadata,
    Column("owner_kind", Text, nullable=False),
    Column("owner_id", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("vector", BLOB, nullable=False),
    PrimaryKeyConstraint("owner_kind", "owner_id", "fingerprint", name="pk_vectors"),
)
Index("ix_vectors_fingerprint", vectors.c.fingerprint, vectors.c.owner_kind)

# Past versions of recall files (docs/adr/0023-file-history.md); the current one stays in ``files``.
file_versions = Table(
    "file_versions",
    metadata,
    Column("seq", Integer, primary_key=True),
    Column("user_id", Text, nullable=False),
    Column("agent_id", Text, nullable=False),
    Column("track", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("action", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("content_hash", Text, nullable=False),
    UniqueConstraint("user_id", "agent_id", "track", "name", "version", name="uq_file_versions_key"),
)
Index("ix_file_versions_created", file_versions.c.created_at)

# Which owners' vectors changed, filled by triggers on ``vectors`` (revision 0003): a warm dense
# index reads the rows past its position instead of loading every vector again.
vector_changes = Table(
    "vector_changes",
    metadata,
    Column("seq", Integer, primary_key=True),
    Column("owner_kind", Text, nullable=False),
    Column("owner_id", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
)

meta = Table(
    "meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

UNMODELLED = ("segments_fts", "resources_fts")
"""Name prefixes of the FTS5 tables (and their shadow tables) that autogenerate must ignore."""
