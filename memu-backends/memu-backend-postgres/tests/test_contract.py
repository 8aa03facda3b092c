"""The shared store contract, run unchanged against a real Postgres."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from memu_backend_postgres import PostgresStore

from memu_core.interfaces import MemoryStore
from memu_core.testing.store_contract import StoreContract


class TestPostgresStore(StoreContract):
    @pytest.fixture(autouse=True)
    def _store_url_factory(self, new_store_url: Callable[[], str]) -> None:
        self._new_store_url = new_store_url

    def make_store(self, tmp_path: Path) -> MemoryStore:
        return PostgresStore.open(self._new_store_url())
