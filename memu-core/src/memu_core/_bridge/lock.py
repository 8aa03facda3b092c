"""The per-host lock: one ``prepare``/``commit`` at a time in a working tree.

An OS advisory lock on ``<tree>/.lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows). The
OS drops it when the process dies, so a crashed run never leaves the tree locked.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memu_core._layout import ensure_private_dir
from memu_core.errors import LockBusy

LOCK_WAIT_ENV = "MEMU_LOCK_WAIT"
DEFAULT_WAIT = 5.0
"""Seconds a second run waits for the first before giving up (a prepare is usually quicker)."""


def _wait_seconds() -> float:
    raw = os.environ.get(LOCK_WAIT_ENV, "").strip()
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_WAIT
    except ValueError:
        return DEFAULT_WAIT


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def host_lock(path: Path, host: str, *, wait: float | None = None) -> Iterator[None]:
    """Hold the host's lock for the body; wait up to ``wait`` seconds, then raise ``LockBusy``."""
    ensure_private_dir(path.parent)  # the host's tree: 0700 when memu makes it
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + (_wait_seconds() if wait is None else wait)
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                holder = _holder(path)
                raise LockBusy(
                    f"another bridging run is working in {path.parent} ({holder}); "
                    f"wait for it to finish and run the command again (or raise {LOCK_WAIT_ENV})"
                )
            time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _holder(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid else "another process"
