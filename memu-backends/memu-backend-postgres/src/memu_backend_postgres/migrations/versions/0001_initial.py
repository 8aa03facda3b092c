"""Initial schema: files, segments, resources, lexical statistics, fingerprints, staging.

Revision ID: 0001
Revises:
Create Date: 2026-12-03

Vectors are stored in untyped ``vector`` columns next to the id of the fingerprint that made
them. The dimension is only known once the first embedder writes, so the HNSW index is not
created here: the store builds one partial expression index per fingerprint,
``((embedding::vector(d)) vector_cosine_ops) WHERE fp_id = n``, in the same transaction that
records the fingerprint (pgvector's documented pattern for mixed dimensions). Everything
whose shape is known up front lives in this revision.
"""

from __future__ import annotations

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_UP = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    """
    CREATE TABLE memu_fingerprints (
        id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        provider    text NOT NULL,
        model       text NOT NULL,
        dimension   integer NOT NULL CHECK (dimension > 0 AND dimension <= 16000),
        UNIQUE (provider, model, dimension)
    )
    """,
    """
    CREATE TABLE memu_meta (
        id              smallint PRIMARY KEY CHECK (id = 1),
        generation      bigint NOT NULL DEFAULT 0,
        live_fp_id      integer REFERENCES memu_fingerprints (id),
        segment_rows    bigint NOT NULL DEFAULT 0,
        segment_tokens  bigint NOT NULL DEFAULT 0,
        resource_rows   bigint NOT NULL DEFAULT 0,
        resource_tokens bigint NOT NULL DEFAULT 0
    )
    """,
    "INSERT INTO memu_meta (id) VALUES (1)",
    """
    CREATE TABLE memu_files (
        id           text COLLATE "C" PRIMARY KEY,
        user_id      text COLLATE "C" NOT NULL,
        agent_id     text COLLATE "C" NOT NULL,
        track        text COLLATE "C" NOT NULL,
        name         text COLLATE "C" NOT NULL,
        description  text NOT NULL,
        content      text NOT NULL,
        content_hash text NOT NULL,
        revision     integer NOT NULL,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        CONSTRAINT memu_files_scope_track_name UNIQUE (user_id, agent_id, track, name)
    )
    """,
    "CREATE INDEX memu_files_page ON memu_files (track, name, id)",
    """
    CREATE TABLE memu_segments (
        id        text PRIMARY KEY,
        file_id   text NOT NULL REFERENCES memu_files (id) ON DELETE CASCADE,
        user_id   text NOT NULL,
        agent_id  text NOT NULL,
        track     text NOT NULL,
        kind      text NOT NULL,
        ordinal   integer NOT NULL,
        text      text NOT NULL,
        context   text NOT NULL DEFAULT '',
        tsv       tsvector NOT NULL,
        ntokens   integer NOT NULL,
        tf        jsonb NOT NULL,
        fp_id     integer REFERENCES memu_fingerprints (id),
        embedding vector,
        CHECK ((fp_id IS NULL) = (embedding IS NULL))
    )
    """,
    "CREATE INDEX memu_segments_file ON memu_segments (file_id)",
    "CREATE INDEX memu_segments_scope ON memu_segments (user_id, agent_id, track)",
    "CREATE INDEX memu_segments_tsv ON memu_segments USING gin (tsv)",
    """
    CREATE TABLE memu_resources (
        id          text PRIMARY KEY,
        user_id     text NOT NULL,
        agent_id    text NOT NULL,
        path        text NOT NULL,
        description text,
        tsv         tsvector NOT NULL,
        ntokens     integer NOT NULL,
        tf          jsonb NOT NULL,
        fp_id       integer REFERENCES memu_fingerprints (id),
        embedding   vector,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        CONSTRAINT memu_resources_scope_path UNIQUE (user_id, agent_id, path),
        CHECK ((fp_id IS NULL) = (embedding IS NULL))
    )
    """,
    "CREATE INDEX memu_resources_tsv ON memu_resources USING gin (tsv)",
    """
    CREATE TABLE memu_terms (
        kind  text NOT NULL,
        term  text NOT NULL,
        df    bigint NOT NULL,
        PRIMARY KEY (kind, term)
    )
    """,
    """
    CREATE TABLE memu_staged_vectors (
        fp_id     integer NOT NULL REFERENCES memu_fingerprints (id) ON DELETE CASCADE,
        kind      text NOT NULL,
        item_id   text NOT NULL,
        text_md5  text NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (fp_id, kind, item_id)
    )
    """,
]

_DOWN = [
    "DROP TABLE IF EXISTS memu_staged_vectors",
    "DROP TABLE IF EXISTS memu_terms",
    "DROP TABLE IF EXISTS memu_resources",
    "DROP TABLE IF EXISTS memu_segments",
    "DROP TABLE IF EXISTS memu_files",
    "DROP TABLE IF EXISTS memu_meta",
    "DROP TABLE IF EXISTS memu_fingerprints",
]


def upgrade() -> None:
    """Create the extension (if allowed and missing) and every table and static index."""
    for statement in _UP:
        op.execute(statement)


def downgrade() -> None:
    """Drop memu's tables; the ``vector`` extension stays (other schemas may use it)."""
    for statement in _DOWN:
        op.execute(statement)
