"""The page as a WSGI application: routes, the gate on every request, and answers.

WSGI because the standard library serves it (``memu ui``) and memu-server mounts the very same
application under ``/ui`` (docs/adr/0025-memu-ui.md). Reads are GETs and work without
JavaScript; every change is a POST through the gate's CSRF and origin checks, answered with a
redirect (so a reload never repeats it).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import parse_qsl, urlencode

from memu_core._ui import views
from memu_core._ui.data import FileKey, Library, markdown_of, unified_diff
from memu_core._ui.gate import TOKEN_PARAM, Gate, Refused, Session
from memu_core._ui.html import Markup, page
from memu_core._ui.static import CSS, JS
from memu_core.errors import ConflictError, MemuError, UsageError

if TYPE_CHECKING:
    from memu_core._engine.engine import LocalEngine

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
MAX_FORM_BYTES = 2 * 1024 * 1024
"""A larger form body is refused (413) before it is read: an edit is one Markdown file."""
EVENTS_SHOWN = 200
SECURITY_HEADERS = [
    ("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
]
DONE = {
    "saved": "Saved {file}.",
    "forgot": "Forgot {file}. Undo it with the button below.",
    "restored": "Restored {file} as a new version.",
    "undone": "Brought {file} back.",
}


class Answer(Exception):
    """A finished response raised from deep in a handler (status, headers, body)."""

    def __init__(self, status: str, body: str, headers: list[tuple[str, str]] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or []


class Request:
    """The parts of a WSGI request the handlers read."""

    def __init__(self, environ: dict[str, Any]) -> None:
        self.environ = environ
        self.method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        self.base = str(environ.get("SCRIPT_NAME", "")).rstrip("/")
        self.path = str(environ.get("PATH_INFO", "")).strip("/")
        self.query = dict(parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True))
        self.headers = {k[5:].replace("_", "-").lower(): str(v) for k, v in environ.items() if k.startswith("HTTP_")}
        host = self.headers.get("host") or f"{environ.get('SERVER_NAME', '')}:{environ.get('SERVER_PORT', '')}"
        self.host = host
        self.origin = f"{environ.get('wsgi.url_scheme', 'http')}://{host}"
        self._form: dict[str, str] | None = None

    def cookies(self) -> dict[str, str]:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(self.headers.get("cookie", ""))
        except CookieError:
            return {}
        return {k: m.value for k, m in jar.items()}

    def form(self) -> dict[str, str]:
        if self._form is None:
            try:
                length = int(self.environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > MAX_FORM_BYTES:
                raise Answer(
                    "413 Content Too Large", "this form is larger than memu ui accepts (2 MiB); shorten the file"
                )
            raw = self.environ["wsgi.input"].read(length) if length > 0 else b""
            self._form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
        return self._form

    def value(self, name: str) -> str:
        """A parameter from the form (POST) or the query string."""
        if self.method == "POST" and name in self.form():
            return self.form()[name]
        return self.query.get(name, "")


class UiApp:
    """The ``memu ui`` page over one engine, behind one :class:`Gate`."""

    def __init__(self, engine: LocalEngine, gate: Gate, *, allowed_hosts: Iterable[str] = ()) -> None:
        self.library = Library(engine)
        self.gate = gate
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self._routes: dict[tuple[str, str], Callable[[Request, Session], tuple[str, Markup]]] = {
            ("GET", ""): self.files,
            ("GET", "search"): self.search,
            ("GET", "file"): self.file,
            ("GET", "diff"): self.diff,
            ("GET", "edit"): self.edit_form,
            ("GET", "runs"): self.runs,
            ("GET", "events"): self.events,
            ("POST", "edit"): self.edit,
            ("POST", "forget"): self.forget,
            ("POST", "undo-forget"): self.undo_forget,
            ("POST", "restore"): self.restore,
        }

    # -- WSGI ------------------------------------------------------------------------------------
    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        request = Request(environ)
        try:
            status, body, headers = self._answer(request)
        except Answer as answer:
            status, body, headers = answer.status, answer.body, answer.headers
        except ConflictError as exc:
            status, body, headers = "409 Conflict", f"not changed: {exc}", []
        except UsageError as exc:  # a bad name, version or scope in the address: one line, the fix
            status, body, headers = "400 Bad Request", f"error: {exc}", []
        except MemuError as exc:
            status, body, headers = "500 Internal Server Error", f"error: {exc}", []
        if not any(k == "Content-Type" for k, _ in headers):
            headers.append(
                (
                    "Content-Type",
                    "text/html; charset=utf-8" if body.startswith("<!doctype") else "text/plain; charset=utf-8",
                )
            )
        data = body.encode("utf-8")
        start_response(status, [*headers, *SECURITY_HEADERS, ("Content-Length", str(len(data)))])
        return [data]

    def _answer(self, request: Request) -> tuple[str, str, list[tuple[str, str]]]:
        if self.allowed_hosts and request.host.lower() not in self.allowed_hosts:
            # A page on another name resolving to 127.0.0.1 (DNS rebinding) is not this page.
            raise Answer(
                "403 Forbidden",
                f"memu ui answers only at {', '.join(sorted(self.allowed_hosts))}, not at {request.host}; "
                "open the address `memu ui` printed",
            )
        if request.method == "GET" and request.path.startswith("static/"):
            return self._static(request.path)
        if TOKEN_PARAM in request.query:
            return self._sign_in(request)
        try:
            session = self.gate.session(request.cookies())
            handler = self._routes.get((request.method, request.path))
            if handler is None:
                known = any(path == request.path for _, path in self._routes)
                raise Answer(
                    "405 Method Not Allowed" if known else "404 Not Found",
                    f"memu ui has no {request.method} /{request.path}; start from {request.base}/",
                )
            if request.method == "POST":
                self.gate.check_write(session, request.form(), request.headers, request.origin)
        except Refused as refused:
            raise Answer("403 Forbidden", f"refused: {refused}") from None
        title, body = handler(request, session)
        return "200 OK", page(request.base, title, body, who=session.grant.label, notice=_notice(request), error=""), []

    def _sign_in(self, request: Request) -> tuple[str, str, list[tuple[str, str]]]:
        opened = self.gate.open(request.query[TOKEN_PARAM])
        if opened is None:
            raise Answer(
                "403 Forbidden",
                "refused: this link's token is not valid (each `memu ui` run makes a new one); "
                "open the address the running `memu ui` printed",
            )
        key, _session = opened
        rest = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
        target = f"{request.base}/{request.path}" + (f"?{urlencode(rest)}" if rest else "")
        cookie = self.gate.cookie_header(key, request.base or "/", secure=request.origin.startswith("https://"))
        return "303 See Other", "signed in", [("Location", target), ("Set-Cookie", cookie)]

    @staticmethod
    def _static(path: str) -> tuple[str, str, list[tuple[str, str]]]:
        files = {"static/ui.css": (CSS, "text/css"), "static/ui.js": (JS, "text/javascript")}
        if path not in files:
            raise Answer("404 Not Found", f"no such file: /{path}")
        text, kind = files[path]
        return "200 OK", text, [("Content-Type", f"{kind}; charset=utf-8")]

    # -- pages -----------------------------------------------------------------------------------
    @staticmethod
    def _ctx(request: Request, session: Session) -> views.Ctx:
        return views.Ctx(request.base, session.csrf, session.grant.label)

    def files(self, request: Request, session: Session) -> tuple[str, Markup]:
        track, host, text = request.value("track"), request.value("host"), request.value("text")
        grant = session.grant
        listed, more = self.library.files(grant, track=track, host=host, text=text, after=request.value("after"))
        hosts = self._safe(lambda: self.library.hosts(grant), [])
        return "Memory files", views.files_body(
            self._ctx(request, session), listed, hosts, track=track, host=host, text=text, more=more
        )

    def search(self, request: Request, session: Session) -> tuple[str, Markup]:
        query, track = request.value("q").strip(), request.value("track")
        mode = request.value("mode") or "hybrid"
        if mode not in ("hybrid", "lexical"):
            raise Answer("400 Bad Request", f"unknown search mode {mode!r}: use hybrid or lexical")
        result = self.library.search(session.grant, query, mode=mode, track=track) if query else None
        return "Search", views.search_body(self._ctx(request, session), query, mode, track, result)

    def file(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        versions = self.library.history(session.grant, key)
        if not versions:
            raise Answer(
                "404 Not Found", f"no {key.track} file named {key.name!r} in this scope (and no history of one)"
            )
        return f"{key.track}/{key.name}", views.file_body(self._ctx(request, session), key, versions)

    def diff(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        versions = self.library.history(session.grant, key)
        number = _number(request.value("v"), "v")
        new = next((v for v in versions if v.version == number), None)
        if new is None:
            raise Answer("404 Not Found", f"{key.track}/{key.name} has no version {number}")
        old = next((v for v in versions if v.version < number), None)
        return f"Changes in {key.track}/{key.name}", views.diff_body(
            self._ctx(request, session), key, old, new, unified_diff(old, new)
        )

    def edit_form(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        versions = self.library.history(session.grant, key)
        if not versions or not versions[0].current:
            raise Answer("404 Not Found", f"no stored {key.track} file named {key.name!r} to edit")
        current = versions[0]
        return f"Edit {key.track}/{key.name}", views.edit_body(
            self._ctx(request, session), key, markdown_of(current), current.hash
        )

    def runs(self, request: Request, session: Session) -> tuple[str, Markup]:
        return "Bridging runs", views.runs_body(self._ctx(request, session), self.library.runs(session.grant))

    def events(self, request: Request, session: Session) -> tuple[str, Markup]:
        from memu_core import events

        spool = events.spool_path()
        return "Events", views.events_body(
            self._ctx(request, session), _tail_events(spool), str(spool), events.telemetry_on()
        )

    # -- writes ----------------------------------------------------------------------------------
    def edit(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        text, base = request.value("text"), request.value("base")
        try:
            self.library.edit(session.grant, key, text, base)
        except (UsageError, ConflictError) as exc:
            # Keep the person's text: the page comes back with it and the reason.
            status = "409 Conflict" if isinstance(exc, ConflictError) else "400 Bad Request"
            ctx = self._ctx(request, session)
            body = views.edit_body(ctx, key, text, base)
            html = page(
                request.base, f"Edit {key.track}/{key.name}", body, who=session.grant.label, error=f"Not saved: {exc}"
            )
            raise Answer(status, html) from None
        self._done(request, key, "saved")

    def forget(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        if not self.library.forget(session.grant, key):
            raise Answer("404 Not Found", f"no {key.track} file named {key.name!r} to forget")
        self._done(request, key, "forgot")

    def undo_forget(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        self._write(lambda: self.library.undo_forget(session.grant, key))
        self._done(request, key, "undone")

    def restore(self, request: Request, session: Session) -> tuple[str, Markup]:
        key = self._key(request)
        number = _number(request.value("v"), "v")
        self._write(lambda: self.library.restore(session.grant, key, number))
        self._done(request, key, "restored")

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _key(request: Request) -> FileKey:
        track, name = request.value("track") or "memory", request.value("name")
        if not name:
            raise Answer("400 Bad Request", "which file? add ?name=NAME (and &track=skill for a skill)")
        return FileKey(track, name, request.value("user") or "default", request.value("agent") or "default")

    @staticmethod
    def _write(action: Callable[[], object]) -> None:
        try:
            action()
        except ConflictError as exc:
            raise Answer("409 Conflict", f"not changed: {exc}") from None
        except UsageError as exc:
            raise Answer("400 Bad Request", f"not changed: {exc}") from None

    @staticmethod
    def _done(request: Request, key: FileKey, what: str) -> NoReturn:
        params = {"track": key.track, "name": key.name, "done": what}
        if (key.user_id, key.agent_id) != ("default", "default"):
            params.update(user=key.user_id, agent=key.agent_id)
        raise Answer("303 See Other", what, [("Location", f"{request.base}/file?{urlencode(params)}")])

    @staticmethod
    def _safe(read: Callable[[], Any], fallback: Any) -> Any:
        try:
            return read()
        except MemuError:  # a store without history or statistics: the page works without them
            return fallback


def _notice(request: Request) -> str:
    template = DONE.get(request.query.get("done", ""))
    if template is None:
        return ""
    return template.format(file=f"{request.query.get('track', 'memory')}/{request.query.get('name', '')}")


def _number(value: str, name: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise Answer("400 Bad Request", f"{name} must be a version number, got {value!r}") from None
    return number


def _tail_events(path: Any) -> list[dict[str, Any]]:
    """The newest :data:`EVENTS_SHOWN` parseable events of the spool, newest first."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = deque(handle, maxlen=EVENTS_SHOWN)
    except OSError:
        return []
    out = []
    for line in reversed(lines):
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out
