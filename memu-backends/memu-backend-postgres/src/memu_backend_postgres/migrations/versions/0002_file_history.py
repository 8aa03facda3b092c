"""File history: who wrote each file's current version, and the past versions of every file.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03

Past versions are kept by triggers on ``memu_files``, so every write path (the batched commit,
a single delete) keeps history without knowing of it: before a row's revision moves, the old row
is copied to ``memu_file_versions``; before a row is deleted, it is copied together with a
``forget`` tombstone holding its content; a new row of a name with history is numbered after it.
What to stamp and how much to keep come from three transaction-local settings the store sets
(``memu.action``, ``memu.actor``, ``memu.keep``); without them (``keep`` 0) nothing is kept.
See docs/adr/0023-file-history.md.
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_UP = [
    "ALTER TABLE memu_files ADD COLUMN action text NOT NULL DEFAULT 'commit'",
    "ALTER TABLE memu_files ADD COLUMN actor text NOT NULL DEFAULT 'before history'",
    """
    CREATE TABLE memu_file_versions (
        user_id      text COLLATE "C" NOT NULL,
        agent_id     text COLLATE "C" NOT NULL,
        track        text COLLATE "C" NOT NULL,
        name         text COLLATE "C" NOT NULL,
        version      integer NOT NULL,
        action       text NOT NULL,
        actor        text NOT NULL,
        created_at   timestamptz NOT NULL,
        description  text NOT NULL,
        content      text NOT NULL,
        content_hash text NOT NULL,
        PRIMARY KEY (user_id, agent_id, track, name, version)
    )
    """,
    "CREATE INDEX memu_file_versions_created ON memu_file_versions (created_at)",
    """
    CREATE FUNCTION memu_history_keep() RETURNS integer LANGUAGE sql STABLE AS $$
        SELECT coalesce(nullif(current_setting('memu.keep', true), ''), '0')::integer
    $$
    """,
    """
    CREATE FUNCTION memu_history_prune(u text, a text, t text, n text) RETURNS void LANGUAGE sql AS $$
        DELETE FROM memu_file_versions v
        WHERE v.user_id = u AND v.agent_id = a AND v.track = t AND v.name = n
          AND v.version < (SELECT w.version FROM memu_file_versions w
                           WHERE w.user_id = u AND w.agent_id = a AND w.track = t AND w.name = n
                           ORDER BY w.version DESC OFFSET greatest(memu_history_keep() - 1, 0) LIMIT 1)
    $$
    """,
    """
    CREATE FUNCTION memu_files_history() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        keep integer := memu_history_keep();
    BEGIN
        IF TG_OP = 'INSERT' THEN
            NEW.action := coalesce(nullif(current_setting('memu.action', true), ''), 'commit');
            NEW.actor := coalesce(current_setting('memu.actor', true), '');
            -- A name forgotten earlier comes back numbered after its tombstone.
            NEW.revision := greatest(NEW.revision, 1 + coalesce((SELECT max(version) FROM memu_file_versions v
                WHERE v.user_id = NEW.user_id AND v.agent_id = NEW.agent_id AND v.track = NEW.track
                  AND v.name = NEW.name), 0));
            RETURN NEW;
        END IF;
        IF TG_OP = 'UPDATE' THEN
            IF NEW.revision = OLD.revision THEN
                RETURN NEW;
            END IF;
            NEW.action := coalesce(nullif(current_setting('memu.action', true), ''), 'commit');
            NEW.actor := coalesce(current_setting('memu.actor', true), '');
        END IF;
        IF keep > 0 THEN
            INSERT INTO memu_file_versions VALUES (OLD.user_id, OLD.agent_id, OLD.track, OLD.name, OLD.revision,
                OLD.action, OLD.actor, OLD.updated_at, OLD.description, OLD.content, OLD.content_hash)
                ON CONFLICT DO NOTHING;
            IF TG_OP = 'DELETE' THEN
                INSERT INTO memu_file_versions VALUES (OLD.user_id, OLD.agent_id, OLD.track, OLD.name,
                    OLD.revision + 1, 'forget', coalesce(current_setting('memu.actor', true), ''), now(),
                    OLD.description, OLD.content, OLD.content_hash)
                    ON CONFLICT DO NOTHING;
            END IF;
            PERFORM memu_history_prune(OLD.user_id, OLD.agent_id, OLD.track, OLD.name);
        END IF;
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER memu_files_history BEFORE INSERT OR UPDATE OR DELETE ON memu_files
        FOR EACH ROW EXECUTE FUNCTION memu_files_history()
    """,
]

_DOWN = [
    "DROP TRIGGER memu_files_history ON memu_files",
    "DROP FUNCTION memu_files_history()",
    "DROP FUNCTION memu_history_prune(text, text, text, text)",
    "DROP FUNCTION memu_history_keep()",
    "DROP TABLE memu_file_versions",
    "ALTER TABLE memu_files DROP COLUMN actor",
    "ALTER TABLE memu_files DROP COLUMN action",
]


def upgrade() -> None:
    """Add the provenance columns, the version table and the trigger that fills it."""
    for statement in _UP:
        op.execute(statement)


def downgrade() -> None:
    """Drop them again."""
    for statement in _DOWN:
        op.execute(statement)
