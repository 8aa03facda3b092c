"""``memu ui``'s page on memu-server, under ``/ui``, behind the server's API keys.

The page is a WSGI application (:func:`memu_core.serving.ui_app`); this module runs it from the
ASGI server in a worker thread. A person opens ``https://server/ui/?token=<API key>`` once: the
key is checked like a Bearer key, the session is bound to the key's scope (a key for one user
never shows another's files), and the page answers by a session cookie from then on. Writes
need the page's CSRF token and its own origin, as on the local page.

The adapter is written here rather than taken from Starlette (its ``WSGIMiddleware`` is
deprecated) or a2wsgi (one more dependency for fifty lines): a page's request body is one form,
read whole, and its answer one small document.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from memu_core.serving import ui_app
from memu_server.keys import KeyStore

MOUNT = "/ui"
"""Where the page lives on the server."""
MAX_BODY = 2 * 1024 * 1024
"""The largest form accepted (an edit is one Markdown file); the page itself says so too."""


def ui_for(backend: Any, keys: KeyStore) -> Callable[..., Any]:
    """The page over ``backend`` as an ASGI application, signing in with ``keys``."""

    def authenticate(token: str) -> dict[str, str | None] | None:
        info = keys.authenticate(token)
        if info is None:
            return None
        return {"user_id": info.user_id, "agent_id": info.agent_id, "label": f"{info.user_id} (key {info.id})"}

    return AsgiFromWsgi(ui_app(backend, authenticate))


class AsgiFromWsgi:
    """Run a WSGI application for ASGI HTTP requests, one worker thread per request."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY:
                await _plain(send, 413, "this form is larger than memu ui accepts (2 MiB); shorten the file")
                return
        status, headers, chunks = await run_in_threadpool(self._run, _environ(scope, body))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    def _run(self, environ: dict[str, Any]) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
        started: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            started["status"] = int(status.split(" ", 1)[0])
            started["headers"] = [(k.lower().encode("latin1"), v.encode("latin1")) for k, v in headers]

        chunks = list(self.app(environ, start_response))
        return started["status"], started["headers"], chunks


def _environ(scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    root = str(scope.get("root_path", ""))
    path = str(scope["path"])
    if path == root or path.startswith(root.rstrip("/") + "/"):
        path = path[len(root) :]
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root.encode("utf-8").decode("latin1"),
        "PATH_INFO": path.encode("utf-8").decode("latin1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin1").upper().replace("-", "_")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{name}"
        if key == "CONTENT_LENGTH":
            continue  # the body was read whole; its real length is set above
        value = raw_value.decode("latin1")
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


async def _plain(send: Any, status: int, text: str) -> None:
    data = text.encode("utf-8")
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
