"""Shared fixtures for the Cola host tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(memu_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated home with the warm server's autostart off (no daemons left behind)."""
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    return memu_home
