"""File history on the sqlite store (the shared contract), and its migration from revision 0001."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memu_core._stores.sqlite.connection import HEAD_REVISION
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.interfaces import MemoryStore
from memu_core.testing.history_contract import HistoryContract


class TestSqliteHistory(HistoryContract):
    def make_store(self, tmp_path: Path) -> MemoryStore:
        return SqliteStore.open(str(tmp_path / "history.sqlite3"))


def test_a_store_from_before_history_upgrades_and_keeps_its_files(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import create_engine

    from memu_core._stores.sqlite import migrate
    from memu_core.types import Scope

    path = tmp_path / "old.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    cfg = migrate._config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    engine.dispose()
    old = sqlite3.connect(path)
    with old:
        old.execute(
            "INSERT INTO files (id, user_id, agent_id, track, name, description, content, content_hash, revision, "
            "created_at, updated_at) VALUES ('f1', 'default', 'default', 'memory', 'legacy', 'old', '- kept', 'h', 3, "
            "'2026-01-01T00:00:00+00:00', '2026-01-02T00:00:00+00:00')"
        )
    old.close()

    store = SqliteStore.open(str(path))  # upgrades to the head revision on open
    try:
        assert SqliteStore.schema_revision(str(path)) == HEAD_REVISION
        (current,) = store.file_history(Scope(), "memory", "legacy")
        assert (current.version, current.actor, current.action, current.content) == (
            3,
            "before history",
            "commit",
            "- kept",
        )
        assert store.stats({}).files == [("memory", "before history", 1)]
    finally:
        store.close()


def test_a_command_actor_reaches_server_threads(tmp_path: Path) -> None:
    import threading

    from memu_core._engine import actor

    before = actor.current_actor()
    try:
        actor.set_actor("memu-server serve")
        seen: list[str] = []
        worker = threading.Thread(target=lambda: seen.append(actor.current_actor()))
        worker.start()
        worker.join()
        with actor.acting_as("memu ui"):
            assert actor.current_actor() == "memu ui"
        assert seen == ["memu-server serve"] and actor.current_actor() == "memu-server serve"
    finally:
        actor.set_actor(before)
