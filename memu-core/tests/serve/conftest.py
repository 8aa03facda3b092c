"""Fixtures for the warm-path tests: a short private HOME (Unix socket paths are length-capped),
a small store in it, and helpers to run real ``memu serve`` processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memu_core import _layout
from memu_core._serve import client

FILES = [
    {
        "name": "profile",
        "track": "memory",
        "description": "who",
        "content": "- drinks green tea\n- lives in Berlin",
    },
    {
        "name": "deploy",
        "track": "skill",
        "description": "how to deploy",
        "content": "1. run tests\n2. tag the release",
    },
]


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh HOME under /tmp with a committed store; ``MEMU_*`` cleared, autostart off."""
    from memu_core._config import resolve
    from memu_core._plugins.manager import Plugins, get_plugins, set_plugins

    root = Path(tempfile.mkdtemp(prefix="mu", dir="/tmp"))
    monkeypatch.setenv("HOME", str(root))
    for key in list(os.environ):
        if key.startswith("MEMU_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "none")
    monkeypatch.setenv("MEMU_SERVE_AUTOSTART", "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolve.reload()
    previous = get_plugins()
    set_plugins(Plugins())
    from memu_core._compose import open_backend

    backend = open_backend()
    backend.commit_results(recall_files=FILES)
    backend.close()
    yield root
    client.stop(timeout=15)
    set_plugins(previous)
    resolve.reload()
    shutil.rmtree(root, ignore_errors=True)


def start_server(*extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``python -m memu_core._serve`` in the foreground of a child process; returned once it answers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memu_core._serve", *extra],
        env=env or dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_until(lambda: client.status() is not None or proc.poll() is not None)
    if proc.poll() is not None:
        raise RuntimeError(
            f"memu serve exited {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}"
        )
    return proc


def wait_until(condition, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Poll ``condition`` every 50 ms until true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def socket_file() -> Path:
    """The socket path under the current HOME."""
    return _layout.serve_socket()
