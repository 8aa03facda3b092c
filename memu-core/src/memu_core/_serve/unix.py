"""Binding a Unix socket that only this user can open: the one binder behind ``memu serve`` and
memu-server's ``--socket``.

The socket is born 0600 (the umask is tightened around ``bind``, so there is no moment where
another user could connect) in a folder created 0700. A socket file already at the path is
probed first: a live server there is never displaced (the caller gets a one-line error), while
a dead server's leftover file is removed and replaced.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

from memu_core.errors import UsageError

MAX_PATH_BYTES = 100
"""Linux and macOS cap a socket path near 104-108 bytes; beyond it ``bind()`` fails obscurely."""
PROBE_TIMEOUT = 0.5
"""How long the probe of an existing socket file waits for a server to accept."""


def bind_private(path: Path, *, backlog: int = 128, too_long_hint: str = "use a shorter path") -> socket.socket:
    """A listening Unix socket at ``path`` (0600, folder 0700) that only this user can open.

    Raises :class:`~memu_core.errors.UsageError` when the path is too long for a Unix socket
    (``too_long_hint`` says what to change) or when another server already listens on it.
    """
    if len(os.fsencode(path)) > MAX_PATH_BYTES:
        raise UsageError(f"the socket path {path} is too long for a Unix socket; {too_long_hint}")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _clear_leftover(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
        os.chmod(path, 0o600)  # the umask already gave 0600; this states it where umask is ignored
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {path} ({exc.strerror or exc}); check the folder's permissions") from None
    finally:
        os.umask(old)
    return sock


def _clear_leftover(path: Path) -> None:
    """Remove a dead server's socket file at ``path``; refuse if a live one answers there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        # Never delete a file that is not a socket: the path was probably mistyped.
        raise UsageError(f"{path} exists and is not a socket; remove it or pick another path")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_TIMEOUT)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # nobody listens: a dead server's leftover
        return
    except OSError:
        pass  # a server too busy to accept in time is still a live server
    finally:
        probe.close()
    raise UsageError(f"another server already listens on {path}; stop it first")
