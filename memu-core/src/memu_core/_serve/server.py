"""``memu serve``: the warm server on the user's Unix socket.

One process per run directory, guaranteed by an ``flock`` on ``serve.lock`` (the kernel drops it
when the process dies, so a crash or ``kill -9`` never blocks the next start; a stale socket file
is simply replaced). It holds one backend (store, index, embedder), answers the v4 API plus two
private routes for the local client, and exits when:

- nobody asked anything for ``idle`` seconds (``MEMU_SERVE_IDLE``; 0 = never);
- ``memu serve --stop`` asked it to, or it got SIGTERM/SIGINT;
- its own configuration, the memu install or the store's schema changed under it (checked every
  couple of seconds and on every mismatched handshake), so it never answers with stale state.

It is a stdlib ``socketserver`` speaking HTTP/1.0, not FastAPI: memu-core must not depend on
FastAPI, and the per-turn path wants the cheapest possible server (see docs/adr/0004-warm-path.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from memu_core import _compose, _layout, v4
from memu_core._atomic import write_text
from memu_core._serve import embedding, stamp, turn, unix
from memu_core.errors import LockBusy, MemuError, UsageError

RETRIEVE = "/_memu/retrieve"
"""Private route: the engine's own ``progressive_retrieve`` (any ``where``, ``tracks``), so warm
and in-process answers are byte-identical."""
STATUS = "/_memu/status"
SHUTDOWN = "/_memu/shutdown"
SELF_CHECK_SECONDS = 2.0
LOCK_PATIENCE = 0.5
_TOO_LONG_HINT = "set MEMU_RUN_DIR to a shorter directory"


ANSWER_HEADER = "X-Memu-Answer"
"""Marks a retrieve answered as printed text (the request's ``answer`` was understood)."""


EVENT_HEADERS = ("X-Memu-Result-Count", "X-Memu-Sinks", "X-Memu-Session-Env")
"""What a light client recording the turn's event asks for (the answer's ``event``): the result's
item count, the plugins declaring event sinks, and the variable the host exports its session id in."""


class Printed:
    """A retrieve answer already in the form the command prints (UTF-8 JSON text), and the
    headers that go with it."""

    __slots__ = ("headers", "text")

    def __init__(self, text: str, headers: dict[str, str] | None = None) -> None:
        self.text = text
        self.headers = headers or {}


def _event_facts(result: Any, event: Any) -> dict[str, str]:
    """What the light client needs to record ``memory_search_succeeded`` itself, from what this
    process has loaded: the result's count, the plugins that declare sinks (read from installed
    metadata, none imported) and the host's session variable. The client decides whether to
    record from its own environment; nothing here reads the switches."""
    from memu_core._events import result_count
    from memu_core._plugins.manager import get_plugins

    manager = get_plugins()
    host = event.get("host") if isinstance(event, dict) else None
    session_env = ""
    if isinstance(host, str) and host:
        try:
            session_env = manager.host(host).session_id_env or ""
        except Exception:  # an unknown host: no session id, as the full command would find
            session_env = ""
    return {
        EVENT_HEADERS[0]: str(result_count(result)),
        EVENT_HEADERS[1]: ",".join(manager.declared_sink_plugins()),
        EVENT_HEADERS[2]: session_env,
    }


def _printed(result: Any, answer: dict[str, Any]) -> str:
    """``result`` as the command that sent ``answer`` prints it: ``{"form": "agent"|"raw",
    "mirror": the host's working tree or null, "max_bytes": the budget}``."""
    from memu_core._retrieve_output import fit, locate_in_mirror, render, shape_for_agent

    budget = answer.get("max_bytes")
    if not isinstance(budget, int) or budget < 0:
        raise v4.ApiError(422, "answer.max_bytes must be a whole number of bytes", "VALIDATION_ERROR")
    if answer.get("form") == "raw":
        return render(fit(result, budget))
    mirror = answer.get("mirror")
    return render(
        fit(shape_for_agent(result, locate_in_mirror(Path(mirror)) if isinstance(mirror, str) else None), budget)
    )


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = 64


class WarmServer:
    """The warm server's state and lifecycle. Build with :meth:`start`, then :meth:`serve`."""

    def __init__(
        self, backend: Any, *, idle: float, socket_file: Path, lock_fd: int, schema: Callable[[], Any]
    ) -> None:
        self.backend = backend
        self.idle = idle
        self.socket_file = socket_file
        self._lock_fd = lock_fd
        self._schema_probe = schema
        self._schema = schema()
        self.version = stamp.memu_version()
        self.config = stamp.config_fingerprint()
        self.started = time.time()
        self.last_used = time.monotonic()
        self.requests = 0
        self.embedded_texts = 0
        self.stop_reason = ""
        self._call_lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _UnixServer | None = None

    # -- start ------------------------------------------------------------------------------
    @classmethod
    def start(
        cls, backend_factory: Callable[[], Any], *, idle: float, schema: Callable[[], Any] | None = None
    ) -> WarmServer:
        """Take the run directory's lock (or raise :class:`LockBusy`), build the backend (the
        factory warms it), bind the socket (0600) and write the pidfile."""
        try:
            _layout.ensure_run_dir()
        except _layout.RunDirError as exc:
            raise UsageError(str(exc)) from None
        sock_path = _layout.serve_socket()
        if len(os.fsencode(sock_path)) > unix.MAX_PATH_BYTES:  # before building a backend for nothing
            raise UsageError(f"the socket path {sock_path} is too long for a Unix socket; {_TOO_LONG_HINT}")
        lock_fd = _take_lock(_layout.serve_lock())
        try:
            backend = backend_factory()
            server = cls(backend, idle=idle, socket_file=sock_path, lock_fd=lock_fd, schema=schema or (lambda: None))
            server._bind()
            server._write_pidfile()
        except BaseException:
            os.close(lock_fd)
            raise
        return server

    def _bind(self) -> None:
        # The lock is ours, so a socket file left here is a dead server's: the binder replaces it.
        server = _UnixServer(str(self.socket_file), _handler_for(self), bind_and_activate=False)
        server.socket.close()
        server.socket = unix.bind_private(
            self.socket_file, backlog=_UnixServer.request_queue_size, too_long_hint=_TOO_LONG_HINT
        )
        self._server = server

    def _write_pidfile(self) -> None:
        info = {
            "pid": os.getpid(),
            "version": self.version,
            "config": self.config,
            "socket": str(self.socket_file),
            "started": self.started,
        }
        write_text(_layout.serve_pidfile(), json.dumps(info), mode=0o600)

    # -- run --------------------------------------------------------------------------------
    def serve(self) -> str:
        """Serve until stopped; clean up; return why it stopped."""
        assert self._server is not None
        watchdog = threading.Thread(target=self._watch, name="memu-serve-watchdog", daemon=True)
        watchdog.start()
        try:
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._cleanup()
        return self.stop_reason

    def stop(self, reason: str) -> None:
        """Ask the server to stop (safe from any thread and from signal handlers)."""
        if self._stopping.is_set():
            return
        self.stop_reason = reason
        self._stopping.set()
        if self._server is not None:
            # shutdown() waits for serve_forever to notice; never call it on the serving thread.
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def _watch(self) -> None:
        next_check = time.monotonic() + SELF_CHECK_SECONDS
        while not self._stopping.wait(0.25):
            now = time.monotonic()
            if self.idle > 0 and now - self.last_used >= self.idle:
                self.stop(f"idle for {self.idle:g}s")
            elif now >= next_check:
                next_check = now + SELF_CHECK_SECONDS
                changed = self.changed()
                if changed:
                    self.stop(changed)

    def changed(self) -> str:
        """Why this server's state is stale (``""`` when it is not): config, install or schema."""
        if stamp.config_fingerprint() != self.config:
            return "configuration changed"
        turn._version_cache = None
        if stamp.memu_version() != self.version:
            return "memu was upgraded"
        try:
            schema = self._schema_probe()
        except Exception:  # a probe failure is not proof of change; the next request will tell
            return ""
        if schema != self._schema:
            return "the store's schema changed"
        return ""

    def _cleanup(self) -> None:
        if self._server is not None:
            self._server.server_close()
        # Remove the socket and pidfile only while we still hold the lock: they are ours.
        with contextlib.suppress(FileNotFoundError):
            self.socket_file.unlink()
        with contextlib.suppress(FileNotFoundError, ValueError, OSError):
            info = json.loads(_layout.serve_pidfile().read_text(encoding="utf-8"))
            if info.get("pid") == os.getpid():
                _layout.serve_pidfile().unlink()
        with contextlib.suppress(Exception):
            self.backend.close()
        os.close(self._lock_fd)

    # -- requests ---------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        """Route one request to ``(status, JSON body)``."""
        self.last_used = time.monotonic()
        self.requests += 1
        url = urlsplit(target)
        route = url.path
        if route == STATUS and method == "GET":
            return 200, self.status()
        if route == SHUTDOWN and method == "POST":
            self.stop("asked to stop")
            return 200, {"stopping": True, "pid": os.getpid()}
        mismatch = self._handshake(headers)
        if mismatch:
            return 409, v4.error_body(mismatch, "STALE_SERVER")
        if route == embedding.EMBED and method == "POST":
            # Not under the call lock: a commit's batch must not hold up the per-turn retrieves.
            answer = embedding.serve_embed(self.backend, body)
            self.embedded_texts += len(body["texts"])
            return 200, answer
        with self._call_lock:
            if route == RETRIEVE and method == "POST":
                return 200, self._retrieve(body)
            if route == v4.COLLECTION and method == "GET":
                return 200, v4.list_files(self.backend, dict(parse_qsl(url.query, keep_blank_values=True)))
            if route == v4.COLLECTION and method == "POST":
                return 200, v4.commit(self.backend, body)
            if route == v4.SEARCH and method == "POST":
                return 200, v4.search(self.backend, body)
            if route == v4.FORGET and method == "POST":
                return 200, v4.forget(self.backend, body)
        return 404, v4.error_body(f"no route {method} {route}", "NOT_FOUND")

    def _handshake(self, headers: dict[str, str]) -> str:
        version = headers.get(stamp.VERSION_HEADER.lower())
        config = headers.get(stamp.CONFIG_HEADER.lower())
        if (version is None or version == self.version) and (config is None or config == self.config):
            return ""
        # Is it us that went stale (then exit so the next start loads the new state), or is this
        # client configured differently (then just refuse; the client works in process)?
        reason = self.changed()
        if reason:
            self.stop(reason)
            return f"this memu serve is stale ({reason}) and is exiting; retry in process"
        return "this memu serve was started for another configuration or memu version; retry in process"

    def _retrieve(self, body: Any) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            raise v4.ApiError(422, "the retrieve body needs a query string", "VALIDATION_ERROR")
        try:
            result = self.backend.progressive_retrieve(
                body["query"],
                body.get("where") or None,
                top_k=body.get("top_k"),
                tracks=body.get("tracks") or None,
            )
        except MemuError as exc:
            raise v4.from_memu_error(exc) from exc
        answer = body.get("answer")
        if not isinstance(answer, dict):
            return result
        facts = _event_facts(result, answer["event"]) if "event" in answer else None
        return Printed(_printed(result, answer), facts)

    def status(self) -> dict[str, Any]:
        """What ``memu serve --status`` prints."""
        return {
            "pid": os.getpid(),
            "version": self.version,
            "config": self.config,
            "socket": str(self.socket_file),
            "uptime": round(time.time() - self.started, 3),
            "idle_after": self.idle,
            "requests": self.requests,
            "embedded_texts": self.embedded_texts,
            "backend": getattr(self.backend, "name", type(self.backend).__name__),
        }


def _handler_for(state: WarmServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "memu-serve"
        protocol_version = "HTTP/1.0"

        def _dispatch(self, method: str) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > v4.MAX_BODY_BYTES:
                self._send(413, v4.error_body(f"request body over {v4.MAX_BODY_BYTES} bytes", "TOO_LARGE"))
                return
            body: Any = None
            if length:
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    self._send(400, v4.error_body("the request body is not valid JSON", "BAD_JSON"))
                    return
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, payload = state.handle(method, self.path, headers, body)
            except v4.ApiError as exc:
                status, payload = exc.status, exc.body()
            except Exception as exc:  # a bug must not kill the server; the client falls back
                status, payload = (
                    500,
                    v4.error_body(f"internal error: {type(exc).__name__}: {exc}", "INTERNAL"),
                )
            self._send(status, payload)

        def _send(self, status: int, payload: Any) -> None:
            printed = isinstance(payload, Printed)
            data = payload.text.encode() if printed else json.dumps(payload, ensure_ascii=False, default=str).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            if printed:
                self.send_header(ANSWER_HEADER, "1")
                for key, value in payload.headers.items():
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: stderr of a background server is a log file, not a console

    return Handler


def _take_lock(path: Path) -> int:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    # A client probing "is a server up?" holds the lock for microseconds; retry briefly so such
    # a probe never makes a starting server give up.
    deadline = time.monotonic() + LOCK_PATIENCE
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
    os.close(fd)
    holder = ""
    with contextlib.suppress(Exception):
        holder = f" (pid {json.loads(_layout.serve_pidfile().read_text(encoding='utf-8'))['pid']})"
    raise LockBusy(f"memu serve is already running for {_layout.run_dir()}{holder}; stop it with `memu serve --stop`")


def _schema_probe(settings: Any) -> Callable[[], Any]:
    """What :meth:`WarmServer.changed` compares: the local store's schema revision."""
    if str(settings.memory_mode) != "local":
        return lambda: None
    target = _compose.store_target(settings)
    return lambda: target.cls.schema_revision(target.url)


def run(*, idle: float | None = None, quiet_busy: bool = False) -> int:
    """Run the warm server in this process until it stops; return an exit code.

    ``quiet_busy``: a background start that lost the race to another one exits 0 silently.
    """
    from memu_core.settings import load_settings

    settings = load_settings()
    idle_s = float(settings.serve_idle if idle is None else idle)
    try:
        server = WarmServer.start(
            lambda: _compose.serving_backend(settings), idle=idle_s, schema=_schema_probe(settings)
        )
    except LockBusy:
        if quiet_busy:
            return 0
        raise
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: server.stop("signal"))
    print(f"memu serve: listening on {server.socket_file} (pid {os.getpid()})", file=sys.stderr, flush=True)
    reason = server.serve()
    print(f"memu serve: stopped ({reason})", file=sys.stderr, flush=True)
    return 0
