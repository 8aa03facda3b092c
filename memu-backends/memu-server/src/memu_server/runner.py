"""Running the app with uvicorn: TCP (keys required) and/or a Unix socket (0600, no keys).

Both listeners serve one warm backend in one process, built by
:func:`memu_core.serving.serving_backend` (always the local engine over ``MEMU_DB``: a server
that forwarded to another v4 API would be a proxy, not a store); the Unix socket is bound by
:func:`memu_core.serving.bind_private_socket`, the binder ``memu serve`` uses too.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Iterator
from typing import Any

from memu_core.errors import UsageError


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
