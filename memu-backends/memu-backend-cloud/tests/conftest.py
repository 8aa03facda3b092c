"""Fixtures: a real memu-server (FastAPI + uvicorn) on 127.0.0.1 over a real SQLite engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memu_server.app import create_app
from memu_server.faults import FaultPlan
from memu_server.keys import KeyStore
from memu_server.testing import serve_in_thread

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core.testing.embedders import HashingEmbedder


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[LocalEngine]:
    backend = LocalEngine(SqliteStore.open(str(tmp_path / "server.sqlite3")), embedder=HashingEmbedder())
    yield backend
    backend.close()


@pytest.fixture
def keys(tmp_path: Path) -> Iterator[KeyStore]:
    store = KeyStore(tmp_path / "keys.sqlite3")
    yield store
    store.close()


@pytest.fixture
def faults() -> FaultPlan:
    """An empty fault plan the test fills in (``plan._queues[...] = [...]``) before calling."""
    return FaultPlan({})


@pytest.fixture
def server(engine: LocalEngine, keys: KeyStore, faults: FaultPlan) -> Iterator[dict[str, Any]]:
    with serve_in_thread(create_app(engine, keys=keys, faults=faults)) as url:
        yield {"base": url + "/api/v4/memory/", "keys": keys, "engine": engine, "faults": faults}
