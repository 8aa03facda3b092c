"""Fixtures: a real local engine on SQLite, a key database, and the app served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memu_server.app import create_app
from memu_server.keys import KeyStore
from memu_server.testing import serve_in_thread

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core.testing.embedders import HashingEmbedder


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[LocalEngine]:
    backend = LocalEngine(SqliteStore.open(str(tmp_path / "memu.sqlite3")), embedder=HashingEmbedder())
    yield backend
    backend.close()


@pytest.fixture
def keys(tmp_path: Path) -> Iterator[KeyStore]:
    store = KeyStore(tmp_path / "keys" / "keys.sqlite3")
    yield store
    store.close()


@pytest.fixture
def served(engine: LocalEngine, keys: KeyStore) -> Iterator[dict[str, Any]]:
    """The TCP app on a free port, plus a key for user ``alice`` and one for ``bob``/``cli``."""
    alice, _ = keys.create("alice")
    bob_cli, _ = keys.create("bob", "cli")
    with serve_in_thread(create_app(engine, keys=keys)) as url:
        yield {"url": url, "alice": alice, "bob_cli": bob_cli, "keys": keys, "engine": engine}
