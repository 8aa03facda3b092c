"""The composition root alone turns settings into objects; the engine receives what it works on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memu_core import _compose
from memu_core._engine.engine import LocalEngine
from memu_core._stores.memory import InMemoryStore
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import ConfigError
from memu_core.settings import load_settings

COMPOSERS = ("memu_core._compose", "memu_core._plugins.manager", "memu_core.settings")


def test_the_engine_and_reindex_import_neither_the_composition_root_nor_the_plugin_manager() -> None:
    code = (
        "import sys\n"
        "import memu_core._engine.engine, memu_core._engine.reindex, memu_core._stores.sqlite\n"
        f"print(sorted(m for m in {COMPOSERS!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_engine_does_not_build_itself_from_settings(memu_home: Path) -> None:
    with pytest.raises(NotImplementedError, match="serving_backend"):
        LocalEngine.from_settings(load_settings())


def test_open_backend_builds_the_engine_over_memu_db(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = _compose.open_backend()
    try:
        assert isinstance(default, LocalEngine)
        assert isinstance(default.store, SqliteStore)
        assert Path(default.store.path) == memu_home / ".memu" / "memu.sqlite3"
    finally:
        default.close()
    monkeypatch.chdir(memu_home)
    monkeypatch.setenv("MEMU_DB", "here.sqlite3")
    for backend in (_compose.open_backend(), _compose.open_backend(load_settings())):
        try:
            assert isinstance(backend, LocalEngine)
            assert isinstance(backend.store, SqliteStore)
            assert Path(backend.store.path) == Path.cwd() / "here.sqlite3"
        finally:
            backend.close()


def test_store_target_names_the_class_and_the_resolved_url(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(memu_home)
    monkeypatch.setenv("MEMU_DB", "sqlite:///rel.db")
    target = _compose.store_target()
    assert target.cls is SqliteStore
    assert target.url == f"sqlite:///{Path.cwd() / 'rel.db'}"
    monkeypatch.setenv("MEMU_DB", ":memory:")
    assert _compose.store_target().cls is InMemoryStore
    monkeypatch.setenv("MEMU_DB", "mysql://u@h/db")
    with pytest.raises(ConfigError, match="unknown scheme 'mysql'"):
        _compose.store_target()


def test_reindex_inputs_need_an_embedder(memu_home: Path) -> None:
    with pytest.raises(ConfigError, match="memu reindex needs an embedder"):
        _compose.reindex_inputs()


def test_a_serving_backend_is_the_local_engine_with_one_math_thread(
    memu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memu_core.serving import serving_backend

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")  # a variable the user set wins
    # memu-server serves the store even where this machine's hosts talk to a cloud API.
    monkeypatch.setenv("MEMU_MEMORY_MODE", "cloud")
    backend = serving_backend()
    try:
        assert isinstance(backend, LocalEngine)
        assert os.environ["OMP_NUM_THREADS"] == "1"
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
        assert os.environ["MKL_NUM_THREADS"] == "3"
    finally:
        backend.close()
