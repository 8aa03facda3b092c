"""Running the app with uvicorn: TCP (keys required) and/or a Unix socket (0600, no keys).

Both listeners serve one warm backend in one process, built by
:func:`memu_core.serving.serving_backend` (always the local engine over ``MEMU_DB``: a server
that forwarded to another v4 API would be a proxy, not a store); the Unix socket is bound by
:func:`memu_core.serving.bind_private_socket`, the binder ``memu serve`` uses too.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Any

from memu_core.errors import UsageError

MAX_PORT = 65535


def check_port(port: int) -> None:
    """Refuse a ``--port`` no socket can have, before anything is opened for it."""
    if not 0 <= port <= MAX_PORT:
        raise UsageError(f"--port {port} is not a TCP port: use 1-{MAX_PORT}, or 0 for a free one")


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening TCP socket (``port`` 0 picks a free one); a bad host or port is one line."""
    check_port(port)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid host name"
        raise UsageError(f"--host {host!r} is not an address here ({reason}); use an IP such as 127.0.0.1") from None
    family, _type, _proto, _name, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it: an answer written as headers then body must not wait for
    # the client's delayed ACK (about 40 ms a request on a keep-alive connection otherwise).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}); {_bind_fix(exc.errno)}") from None
    sock.listen(2048)
    return sock


def _bind_fix(code: int | None) -> str:
    """The fix for a failed TCP bind, by its cause."""
    if code == errno.EADDRNOTAVAIL:
        return "--host must be an address of this machine (or 0.0.0.0 for all of them)"
    if code == errno.EACCES:
        return "ports below 1024 need privileges; pick a --port of 1024 or more"
    return "pick another --port"


DRAIN_SECONDS = 30
"""After SIGTERM, how long requests in flight may take to finish before their connections close.
A store call that outlives it still runs to its end before the process exits."""


def _quiet_server(app: Any, log_level: str, drain: int = DRAIN_SECONDS) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Two servers share one process; the caller installs one handler that stops both.
            yield

    config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="off", timeout_graceful_shutdown=drain)
    return Server(config)


def serve(
    listeners: list[tuple[Any, socket.socket]],
    *,
    log_level: str = "warning",
    drain: int = DRAIN_SECONDS,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Serve each ``(app, socket)`` until SIGINT/SIGTERM, then drain.

    On the signal every listener stops accepting, ``on_stop`` runs (the server marks itself
    draining, so ``/healthz`` answers 503 to the load balancer), and each request in flight is
    answered; idle keep-alive connections close. The caller then waits for the store calls still
    running (``Serving.close``) before it closes the store, so a commit in flight lands.
    """
    servers = [(_quiet_server(app, log_level, drain), sock) for app, sock in listeners]

    def stop(*_: Any) -> None:
        if on_stop is not None:
            on_stop()
        for server, _sock in servers:
            server.should_exit = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)

    async def main() -> None:
        await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))

    # uvicorn's own choice of loop (uvloop when installed), as `uvicorn.run` would make it.
    factory = servers[0][0].config.get_loop_factory() if servers else None
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())
