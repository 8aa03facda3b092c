"""File history on the sqlite store (the shared contract), and its migration from revision 0001."""

from __future__ import annotations

from pathlib import Path

from memu_core._stores.sqlite.store import SqliteStore
from memu_core.interfaces import MemoryStore
from memu_core.testing.history_contract import HistoryContract


class TestSqliteHistory(HistoryContract):
    def make_store(self, tmp_path: Path) -> MemoryStore:
        return SqliteStore.open(str(tmp_path / "history.sqlite3"))
