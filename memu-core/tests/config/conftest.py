"""Fixtures for the configuration tests: an isolated HOME with no MEMU_* variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._config import resolve


@pytest.fixture
def cfg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temp HOME, every ``MEMU_*`` and ``NO_PROXY`` variable removed, the resolver cache empty."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for key in list(os.environ):
        if key.startswith("MEMU_") or key in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(key, raising=False)
    resolve.reload()
    yield home
    resolve.reload()


@pytest.fixture
def config_file(cfg_home: Path) -> Path:
    """Where the config file lives under :func:`cfg_home` (not created)."""
    return cfg_home / ".memu" / "config.env"
