"""pytest plugin: fixtures every memu package's tests can use. Opt-in, never auto-loaded.

A project loads it from its root ``conftest.py`` with ``pytest_plugins = ["memu_core.testing.plugin"]``;
it then turns off hypothesis' per-example deadline and sets ``MEMU_SERVE_AUTOSTART=0`` for that run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core._plugins.manager import Plugins, get_plugins, set_plugins


def pytest_configure(config: pytest.Config) -> None:
    """Tests never start a background ``memu serve`` unless a test asks for one: a daemon left
    behind would outlive the run (tests of autostart set ``MEMU_SERVE_AUTOSTART=1`` themselves)."""
    os.environ.setdefault("MEMU_SERVE_AUTOSTART", "0")
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    # Example timing is not a property: on a loaded CI machine a slow example is noise, not a bug.
    settings.register_profile("memu", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "memu"))


@pytest.fixture
def fresh_plugins() -> Iterator[Plugins]:
    """A new process plugin manager (built-ins plus installed entry points), restored afterwards."""
    previous = get_plugins()
    fresh = Plugins()
    set_plugins(fresh)
    try:
        yield fresh
    finally:
        set_plugins(previous)


@pytest.fixture
def memu_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An isolated home: ``HOME`` in a temp dir, every ``MEMU_*`` variable cleared, a fresh
    plugin manager and a reloaded config cache; lexical-only, no warm-server autostart.
    Returns the home directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for key in list(os.environ):
        if key.startswith("MEMU_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "none")
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    try:
        from memu_core._config import resolve

        resolve.reload()
    except (ImportError, AttributeError):
        pass
    previous = get_plugins()
    set_plugins(Plugins())
    yield home
    set_plugins(previous)
    try:
        from memu_core._config import resolve

        resolve.reload()
    except (ImportError, AttributeError):
        pass
