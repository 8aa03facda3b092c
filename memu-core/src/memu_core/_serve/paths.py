"""Where the warm server lives: ``~/.memu/run/`` (mode 0700) holds its socket (0600), its lock
and its pidfile. Stdlib only: the per-turn client imports this."""

from __future__ import annotations

import os
from pathlib import Path

RUN_DIR_ENV = "MEMU_RUN_DIR"
"""Overrides ``~/.memu/run`` (read from the process only; tests and unusual layouts use it)."""

SOCKET_NAME = "memu.sock"
LOCK_NAME = "serve.lock"
PID_NAME = "serve.json"
LOG_NAME = "serve.log"

# Linux and macOS cap a socket path near 104-108 bytes; beyond it bind() fails obscurely.
MAX_SOCKET_PATH = 100


def run_dir() -> Path:
    """The run directory (not created)."""
    raw = os.environ.get(RUN_DIR_ENV) or "~/.memu/run"
    return Path(os.path.expanduser(raw))


def ensure_run_dir() -> Path:
    """Create the run directory private to the user (0700), tightening it if it exists."""
    path = run_dir()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and (path.stat().st_mode & 0o777) != 0o700:
        os.chmod(path, 0o700)
    return path


def socket_path() -> Path:
    """The server's Unix socket."""
    return run_dir() / SOCKET_NAME


def lock_path() -> Path:
    """The lock file held (``flock``) by the one live server of this run directory."""
    return run_dir() / LOCK_NAME


def pid_path() -> Path:
    """JSON with the live server's pid, version and configuration fingerprint."""
    return run_dir() / PID_NAME


def log_path() -> Path:
    """Where a background-started server writes its stderr."""
    return run_dir() / LOG_NAME
