"""Running the app with uvicorn: TCP (keys required) and/or a Unix socket (0600, no keys).

Both listeners serve one warm backend in one process. The backend is always the local engine
over the configured store (``MEMU_DB``): a server that forwarded to another v4 API would be a
proxy, not a store.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memu_core.errors import UsageError


def open_local_backend(settings: Any | None = None) -> Any:
    """The ``local`` engine over ``MEMU_DB`` with its embedder loaded and its index warm."""
    from memu_core._plugins.manager import get_plugins
    from memu_core.settings import load_settings

    s = settings if settings is not None else load_settings()
    backend = get_plugins().backends().require("local").from_settings(s)
    if getattr(backend, "embedder", None) is not None:
        with contextlib.suppress(Exception):
            backend.progressive_retrieve("warm up", None, top_k=1)
    return backend


def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` that only this user can open (born 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileNotFoundError):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink()  # a dead server's leftover
        else:
            raise UsageError(f"another server already listens on {path}; stop it first")
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket (``port`` 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port") from None
    sock.listen(2048)
    return sock


def _quiet_server(app: Any, log_level: str) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Two servers share one process; the caller installs one handler that stops both.
            yield

    return Server(uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off"))


def serve(listeners: list[tuple[Any, socket.socket]], *, log_level: str = "warning") -> None:
    """Serve each ``(app, socket)`` until SIGINT/SIGTERM."""
    servers = [(_quiet_server(app, log_level), sock) for app, sock in listeners]

    def stop(*_: Any) -> None:
        for server, _sock in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)

    async def main() -> None:
        await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))

    asyncio.run(main())
