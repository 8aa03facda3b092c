"""File history on a real Postgres: the shared contract (the trigger of migration 0002 keeps it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memu_backend_postgres import PostgresStore
from memu_backend_postgres._schema import HEAD_REVISION

from memu_core.interfaces import MemoryStore
from memu_core.testing.history_contract import HistoryContract


class TestPostgresHistory(HistoryContract):
    @pytest.fixture(autouse=True)
    def _store_url_factory(self, new_store_url: Callable[[], str]) -> None:
        self._new_store_url = new_store_url

    def make_store(self, tmp_path: Path) -> MemoryStore:
        return PostgresStore.open(self._new_store_url())


def test_a_store_from_before_history_upgrades_and_keeps_its_files(new_database: Callable[[], str]) -> None:
    import sqlalchemy as sa
    from alembic import command
    from memu_backend_postgres._url import normalise_url
    from memu_backend_postgres.migrate import _alembic_config

    from memu_core._engine.engine import LocalEngine
    from memu_core.types import Scope

    url = new_database()
    engine = sa.create_engine(normalise_url(url))
    try:
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), "0001")
            conn.execute(
                sa.text(
                    "INSERT INTO memu_files (id, user_id, agent_id, track, name, description, content, content_hash, "
                    "revision, created_at, updated_at) VALUES ('f1', 'default', 'default', 'memory', 'legacy', 'old', "
                    "'- kept', 'h', 3, now(), now())"
                )
            )
    finally:
        engine.dispose()
    store = PostgresStore.open(url)  # upgrades to the head revision on open
    try:
        assert PostgresStore.schema_revision(url) == HEAD_REVISION
        (current,) = store.file_history(Scope(), "memory", "legacy")
        assert (current.version, current.actor, current.action, current.content) == (
            3,
            "before history",
            "commit",
            "- kept",
        )
        LocalEngine(store).commit_results(recall_files=[{"name": "legacy", "content": "- changed"}], actor="memu edit")
        assert [(v.version, v.actor) for v in store.file_history(Scope(), "memory", "legacy")] == [
            (4, "memu edit"),
            (3, "before history"),
        ]
    finally:
        store.close()
