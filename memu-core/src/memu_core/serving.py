"""Serving memu's store from a process built outside memu-core (memu-server is the example).

Two names, the same machinery ``memu serve`` runs on, so a server of your own opens the store
and the embedder exactly as every memu binary does and binds its socket as safely:

- :func:`serving_backend`: the local engine over ``MEMU_DB``, warm before the first request;
- :func:`bind_private_socket`: a listening Unix socket only this user can open.

Importing this module is cheap; the engine and its plugins load when a backend is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core._serve.unix import bind_private as _bind_private

if TYPE_CHECKING:
    import socket
    from pathlib import Path

    from memu_core.interfaces import AgenticMemoryBackend
    from memu_core.settings import Settings

__all__ = ["bind_private_socket", "serving_backend"]


def serving_backend(settings: Settings | None = None) -> AgenticMemoryBackend:
    """The local engine over the store ``MEMU_DB`` names, ready to serve many requests.

    It is built the one way every memu binary builds it (the same store resolution, the same
    embedder choice), after defaulting OpenMP/BLAS to one thread (requests run in parallel
    threads, each embedding one short query, where intra-op threads only contend; a variable
    the user set wins), and warmed: the configured embedder is built and the dense index
    loaded before this returns. ``MEMU_MEMORY_MODE`` is
    not consulted: a server serves a store; forwarding to another API would make it a proxy.
    ``settings`` defaults to :func:`memu_core.settings.load_settings`. Configuration problems
    raise :class:`~memu_core.errors.ConfigError`.
    """
    from memu_core._compose import serving_backend as _serving_backend

    return _serving_backend(settings, local=True)


def bind_private_socket(path: Path, *, backlog: int = 128) -> socket.socket:
    """A listening Unix socket at ``path``, born 0600 in a folder created 0700.

    A live server already listening there is never displaced: that is a
    :class:`~memu_core.errors.UsageError` (so is a path too long for a Unix socket, or a file at
    ``path`` that is not a socket). A dead server's leftover socket file is replaced.
    """
    return _bind_private(path, backlog=backlog, too_long_hint="pass a shorter socket path")
