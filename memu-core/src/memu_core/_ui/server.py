"""``memu ui``'s own process: the page on 127.0.0.1 behind a per-run token, until Ctrl-C.

A stdlib threaded WSGI server: memu-core stays free of web frameworks, and one person's browser
is the only client. The token is new on every run and printed only in the URL; the page trades
it for a session cookie on the first request (:mod:`memu_core._ui.gate`).
"""

from __future__ import annotations

import secrets
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from memu_core._ui.gate import TOKEN_PARAM, Gate, token_checker

if TYPE_CHECKING:
    from memu_core._engine.engine import LocalEngine
    from memu_core._ui.app import UiApp

LOOPBACK = "127.0.0.1"


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per request, so a slow search never blocks the next click."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: the URLs carry file names, and the terminal shows the address."""

    def log_message(self, format: str, *args: Any) -> None:
        return


class RunningUi:
    """A started page: its URL (with the token), the app and a way to stop it."""

    def __init__(self, server: WSGIServer, app: UiApp, token: str, host: str) -> None:
        self.server = server
        self.app = app
        self.address = f"http://{host}:{server.server_address[1]}"
        self.url = f"{self.address}/?{TOKEN_PARAM}={token}"
        self._thread: threading.Thread | None = None

    def start_background(self) -> RunningUi:
        """Serve from a daemon thread (tests, benchmarks); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.server.serve_forever, name="memu-ui", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=10)
        self.server.server_close()


def start(engine: LocalEngine, *, host: str = LOOPBACK, port: int = 0, token: str | None = None) -> RunningUi:
    """Bind the page (port 0: any free one) over ``engine``; call ``serve_forever`` or
    :meth:`RunningUi.start_background` on the result."""
    from memu_core._ui.app import UiApp

    token = token or secrets.token_urlsafe(24)
    gate = Gate(token_checker(token))
    server = make_server(host, port, _placeholder, server_class=_ThreadingServer, handler_class=_QuietHandler)
    bound = server.server_address[1]
    names = {f"{host}:{bound}"} | ({f"localhost:{bound}"} if host == LOOPBACK else set())
    app = UiApp(engine, gate, allowed_hosts=names)
    server.set_app(app)
    return RunningUi(server, app, token, host)


def _placeholder(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
    return [b"starting"]


def serve(running: RunningUi, *, open_browser: bool, out: IO[str] = sys.stdout) -> int:
    """Print the URL, open the browser (unless told not to) and serve until interrupted."""
    print(f"memu ui: {running.url}", file=out, flush=True)
    print("(the link holds this run's token; press Ctrl-C to stop)", file=out, flush=True)
    if open_browser:
        import webbrowser

        if not webbrowser.open(running.url):
            print("no browser could be opened here; open the link above yourself", file=out, flush=True)
    try:
        running.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        running.server.server_close()
    return 0


def run(*, port: int = 0, open_browser: bool = True) -> int:
    """``memu ui``: the local engine over ``MEMU_DB``, the page on 127.0.0.1, served until Ctrl-C.

    In cloud mode the memory is on the server, not in ``MEMU_DB``: the command refuses and
    points at the server's own page rather than show a store the agents do not use.
    """
    from memu_core import _compose
    from memu_core.errors import UsageError
    from memu_core.settings import load_settings

    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port; pass 1-65535, or leave it out for any free port")
    settings = load_settings()
    if settings.memory_mode != "local":
        raise UsageError(
            f"MEMU_MEMORY_MODE is {settings.memory_mode}: memory lives on the server, not in this machine's store; "
            "open the server's /ui/ page with your API key (a memu-server serves it), or set MEMU_MEMORY_MODE=local"
        )
    _compose.single_threaded_math()
    engine = _compose.local_engine(settings)
    try:
        running = start(engine, port=port)
    except OSError as exc:
        raise UsageError(f"cannot listen on {LOOPBACK}:{port} ({exc.strerror}); pass another --port, or none") from None
    # The page opens at once; the embedding model loads meanwhile, and a search waits for it.
    library = running.app.library
    library.warm.clear()

    def warm_up() -> None:
        try:
            _compose.warm(engine)
        finally:
            library.warm.set()

    threading.Thread(target=warm_up, name="memu-ui-warm", daemon=True).start()
    try:
        return serve(running, open_browser=open_browser)
    finally:
        engine.close()
