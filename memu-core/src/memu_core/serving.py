"""Serving memu's store from a process built outside memu-core (memu-server is the example).

The same machinery ``memu serve`` and ``memu ui`` run on, so a server of your own opens the
store and the embedder exactly as every memu binary does, binds its socket as safely, and can
show the same page:

- :func:`serving_backend`: the local engine over ``MEMU_DB``, warm before the first request;
- :func:`bind_private_socket`: a listening Unix socket only this user can open;
- :func:`ui_app`: ``memu ui``'s page as a WSGI application, behind your own sign-in check.

Importing this module is cheap; the engine and its plugins load when a backend is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memu_core._serve.unix import bind_private as _bind_private

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from memu_core.interfaces import AgenticMemoryBackend
    from memu_core.settings import Settings

__all__ = ["bind_private_socket", "serving_backend", "ui_app"]


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


def ui_app(
    backend: AgenticMemoryBackend, authenticate: Callable[[str], Mapping[str, str | None] | None]
) -> Callable[..., Any]:
    """``memu ui``'s page over ``backend`` (the local engine), as a WSGI application to mount.

    ``authenticate`` turns the ``?token=`` of a first visit into the scope the session may use,
    ``{"user_id": ..., "agent_id": ... or None, "label": "shown in the page header"}``, or
    ``None`` to refuse it (403). The page then works by a session cookie, and every change needs
    its CSRF token and the page's own origin (docs/adr/0025-memu-ui.md). A backend other than
    the local engine is a :class:`~memu_core.errors.UsageError`.
    """
    from memu_core._engine.engine import LocalEngine
    from memu_core._ui.app import UiApp
    from memu_core._ui.gate import Gate, Grant
    from memu_core.errors import UsageError

    if not isinstance(backend, LocalEngine):
        kind = getattr(backend, "name", type(backend).__name__)
        raise UsageError(f"the memu ui page needs the local engine, not the {kind!r} backend")

    def check(token: str) -> Grant | None:
        found = authenticate(token)
        if found is None:
            return None
        user = found.get("user_id") or None
        if user is None:
            raise UsageError("ui_app's authenticate must name the user_id a token may use")
        return Grant(user_id=user, agent_id=found.get("agent_id") or None, label=found.get("label") or user)

    return UiApp(backend, Gate(check))
