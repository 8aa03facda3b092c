"""The ``sqlite`` store: the shared contract plus what only a file-backed store can show."""

from __future__ import annotations

from pathlib import Path

from memu_core._stores.sqlite import SqliteStore
from memu_core.interfaces import MemoryStore
from memu_core.testing.store_contract import StoreContract


class TestSqliteStore(StoreContract):
    def make_store(self, tmp_path: Path) -> MemoryStore:
        return SqliteStore.open(str(tmp_path / "memu.db"))
