"""The Hermes source honours the transcript-source contract (a real WAL database)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memu_host_hermes.source import HermesSource

from memu_core.testing.source_contract import SourceContract, SourceFixture


class TestHermesContract(SourceContract):
    @pytest.fixture(autouse=True)
    def _db_class(self, hermes_db_class: Any) -> None:
        self.db_class = hermes_db_class

    def make(self, tmp_path: Path) -> SourceFixture:
        db = self.db_class(tmp_path / "h" / "state.db")
        clock = [1_700_000_000.0]

        def add(session: str, texts: list[str]) -> None:
            for text in texts:
                clock[0] += 1
                db.message(session, "user", clock[0], text)

        return SourceFixture(HermesSource(db.path), add, db.close)
