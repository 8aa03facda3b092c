"""File history on a real Postgres: the shared contract (the trigger of migration 0002 keeps it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memu_backend_postgres import PostgresStore

from memu_core.interfaces import MemoryStore
from memu_core.testing.history_contract import HistoryContract


class TestPostgresHistory(HistoryContract):
    @pytest.fixture(autouse=True)
    def _store_url_factory(self, new_store_url: Callable[[], str]) -> None:
        self._new_store_url = new_store_url

    def make_store(self, tmp_path: Path) -> MemoryStore:
        return PostgresStore.open(self._new_store_url())
