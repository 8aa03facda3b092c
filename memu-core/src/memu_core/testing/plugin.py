"""pytest plugin: fixtures every memu package's tests can use. Opt-in, never auto-loaded.

A project loads it from its root ``conftest.py`` with ``pytest_plugins = ["memu_core.testing.plugin"]``;
it then turns off hypothesis' per-example deadline, sets ``MEMU_SERVE_AUTOSTART=0`` for that run,
and fails the run if it leaves a warm ``memu serve`` process behind.
"""

from __future__ import annotations

import contextlib
import itertools
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


RUN_MARK = "PYTEST_MEMU_RUN"
"""Environment variable naming this test run; every process the run starts inherits it (its name
does not start with ``MEMU_``, so tests that clear memu's settings keep it)."""
LEFTOVER_GRACE = 10.0
"""Seconds a warm server stopped at the end of a test may take to exit before it counts as left."""


def pytest_sessionstart(session: pytest.Session) -> None:
    """Mark this run, so the servers it starts can be told from anyone else's."""
    import uuid

    # Always a new mark: a run started from inside another run's test must not claim its servers.
    os.environ[RUN_MARK] = uuid.uuid4().hex


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if it left a ``memu serve`` process behind (and end those processes): an
    autostarted warm server outlives the tests by 30 minutes and holds hundreds of megabytes."""
    left = _leftover_servers(os.environ.get(RUN_MARK, ""))
    if not left:
        return
    import signal

    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = (
        f"this test run left {len(left)} memu serve process(es) running (pid {', '.join(map(str, left))}; "
        "now stopped): a test started the warm server without stopping it, or ran a retrieve with "
        "MEMU_SERVE_AUTOSTART unset"
    )
    if reporter is not None:
        reporter.write_line(f"error: {message}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _leftover_servers(mark: str) -> list[int]:
    """Pids of warm servers started by this run that are still alive after a short grace."""
    import time

    if not mark or not os.path.isdir("/proc"):
        return []  # only Linux exposes other processes' environments this way
    deadline = time.monotonic() + LEFTOVER_GRACE
    while True:
        found = _servers_marked(mark)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.2)


def _servers_marked(mark: str) -> list[int]:
    needle = f"{RUN_MARK}={mark}".encode()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            args = cmdline.split(b"\0")
            # `python -m memu_core._serve` (how retrieve autostarts it) or the `memu serve` script.
            if b"memu_core._serve" not in args and not any(
                a.endswith(b"memu") and b == b"serve" for a, b in itertools.pairwise(args)
            ):
                continue
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # gone, or not ours to read
            continue
    return found


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
