"""The FastAPI application: memU's v4 memory API over one local backend.

``create_app(backend, keys=KeyStore)`` is the TCP face: every request needs
``Authorization: Bearer <key>`` and may only touch the key's scope (401 unknown or revoked key,
403 another scope; a request naming no scope acts in the key's). ``keys=None`` is the trusted
face for a Unix socket only the user can open. The rules themselves (scopes, bounds, error
shapes) live in :mod:`memu_core.v4`, shared with ``memu serve``.

Serving (ADR 0027): the routes are coroutines on one event loop; keys are checked from a
cache (:class:`~memu_server.keys.KeyCache`); store work runs on a few worker threads behind
a bounded queue (:mod:`memu_server.gate`, 503 with ``Retry-After`` past it); search answers
are reused until a write may have changed them (:mod:`memu_server.answers`); ``/metrics``
counts it all (:mod:`memu_server.metrics`).
"""

# No ``from __future__ import annotations``: FastAPI resolves the locally built dependency
# aliases (``Caller``) from the annotations at definition time.

import asyncio
import json
import os
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from memu_core import v4
from memu_server.events import ROUTE, STATS_ROUTE, EventLog, InvalidEvent, check
from memu_server.faults import FAULTS_ENV, FaultMiddleware, FaultPlan
from memu_server.gate import Busy
from memu_server.keys import KeyCache, KeyStore
from memu_server.metrics import CONTENT_TYPE, MetricsMiddleware
from memu_server.models import CommitBody, ErrorBody, ForgetBody, SearchBody, plain
from memu_server.serving import Serving, ServingOptions
from memu_server.shortcut import RAW_KEY, SearchShortcut

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (401, 403, 409, 413, 422, 500, 503)}
JSON_ANSWER: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/json": {"schema": {"type": "object", "additionalProperties": True}}}}
}
BODY_SECONDS = 30.0
"""A request body must arrive within this long (a slow client cannot hold a request open)."""


def _dumps(data: Any) -> bytes:
    # Starlette's JSONResponse bytes, without FastAPI's encoder walking the answer first.
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _answer(payload: bytes) -> Response:
    return Response(payload, media_type="application/json")


class BodyLimit:
    """Pure ASGI middleware: refuse bodies over ``limit`` bytes with 413, declared or streamed,
    and bodies that do not arrive within :data:`BODY_SECONDS` with 408."""

    def __init__(self, app: Any, limit: int = v4.MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(send, self.limit)
            return
        seen = 0
        refused: tuple[int, dict[str, Any]] | None = None
        started = False

        async def bounded() -> Any:
            nonlocal seen, refused
            try:
                message = await asyncio.wait_for(receive(), BODY_SECONDS)
            except TimeoutError:
                text = f"the request body did not arrive within {BODY_SECONDS:g} s; send it at once"
                refused = (408, v4.error_body(text, "REQUEST_TIMEOUT"))
                raise _Refused from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    text = f"request body over {self.limit} bytes; split the commit"
                    refused = (413, v4.error_body(text, "TOO_LARGE"))
                    raise _Refused
            return message

        async def answer(message: Any) -> None:
            # The framework turns an error while reading a body into its own 400; the refusal
            # decided here replaces whatever answer follows it.
            nonlocal started
            if refused is not None:
                if not started:
                    started = True
                    await _refuse(send, *refused)
                return
            started = True
            await send(message)

        try:
            await self.app(scope, bounded, answer)
        except _Refused:
            if not started and refused is not None:
                started = True
                await _refuse(send, *refused)


class _Refused(Exception):
    """The body broke a bound; the refusal to send is kept beside it."""


async def _too_large(send: Any, limit: int) -> None:
    await _refuse(send, 413, v4.error_body(f"request body over {limit} bytes; split the commit", "TOO_LARGE"))


async def _refuse(send: Any, status: int, error: dict[str, Any]) -> None:
    body = json.dumps(error).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def create_app(
    backend: Any,
    *,
    keys: KeyStore | None,
    faults: FaultPlan | None = None,
    events: EventLog | None = None,
    options: ServingOptions | None = None,
    serving: Serving | None = None,
) -> FastAPI:
    """The v4 API over ``backend``; ``keys`` ``None`` means no authentication (Unix socket only).
    With ``events``, also memU's event ingest route and its stats, under the same keys.

    ``serving`` (the worker threads, the answer cache, the metrics) may be shared by several
    apps over one backend (the TCP and socket faces of one server); without it one is made
    from ``options``. ``app.state.serving.close()`` stops it once the server has stopped.
    """
    app = FastAPI(
        title="memu-server",
        version="4",
        description="memU's v4 memory API, self-hosted over a local memu store.",
        redirect_slashes=False,  # memU's service answers 404 for /api/v4/memory/, not a redirect
    )
    run = serving or Serving(backend, options or ServingOptions())
    app.state.serving = run
    if keys is not None:
        _mount_ui(app, backend, keys)
    bearer = HTTPBearer(auto_error=False, description="An API key from `memu-server keys create`.")
    checker = KeyCache(keys, run.options.key_max_age) if keys is not None else None

    async def caller(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> v4.ScopeKey | None:
        if checker is None:
            return None
        if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
            raise v4.ApiError(401, "missing API key: send Authorization: Bearer <key>", "UNAUTHENTICATED")
        token = credentials.credentials
        known, info = checker.cached(token)
        if not known:
            info = await asyncio.to_thread(checker.authenticate, token)
        if info is None:
            raise v4.ApiError(401, "unknown or revoked API key", "UNAUTHENTICATED")
        return info.scope

    async def trusted() -> v4.ScopeKey | None:
        return None

    # The socket face declares no security scheme: nothing there asks for a key.
    Caller = Annotated[v4.ScopeKey | None, Depends(caller if keys is not None else trusted)]

    @app.exception_handler(v4.ApiError)
    async def _api_error(_request: Request, exc: v4.ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if exc.status == 503:
            retry = getattr(exc.__cause__, "retry_after", 1.0)
            headers = {"Retry-After": Busy("", retry).retry_after_header}
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.exception_handler(Busy)
    async def _busy(_request: Request, exc: Busy) -> JSONResponse:
        return JSONResponse(
            v4.error_body(str(exc), "BUSY"), status_code=503, headers={"Retry-After": exc.retry_after_header}
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
        if first.get("type") == "extra_forbidden":
            message = f"unsupported field {where!r}: only exact user_id and agent_id scope fields are supported"
        else:
            message = f"{where}: {first.get('msg', 'invalid request')}"
        return JSONResponse(v4.error_body(message, "VALIDATION_ERROR"), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(exc.status_code, "HTTP_ERROR")
        return JSONResponse(v4.error_body(str(exc.detail), code), status_code=exc.status_code, headers=exc.headers)

    @app.get(
        "/api/v4/memory",
        responses={**ERRORS, **JSON_ANSWER},
        response_class=Response,
        summary="List recall files (one page)",
    )
    async def list_memory(
        request: Request,
        caller: Caller,
        user_id: Annotated[str | None, Query(max_length=v4.MAX_SCOPE_CHARS)] = None,
        agent_id: Annotated[str | None, Query(max_length=v4.MAX_SCOPE_CHARS)] = None,
        cursor: Annotated[str | None, Query(max_length=2_000, pattern=r"^[A-Za-z0-9_=-]*$")] = None,
        limit: Annotated[int, Query(ge=1, le=v4.MAX_PAGE)] = v4.DEFAULT_PAGE,
    ) -> Response:
        """One page of the scope's files; pass ``next_cursor`` back as ``cursor`` for the next."""
        params = dict(request.query_params)
        return _answer(_dumps(await run.gate.run(v4.list_files, backend, params, caller)))

    @app.post(
        "/api/v4/memory",
        responses={**ERRORS, **JSON_ANSWER},
        response_class=Response,
        summary="Commit recall files and resources",
    )
    async def commit(body: CommitBody, caller: Caller) -> Response:
        """Store files and resources in one transaction. Idempotent by content: re-sending the
        same commit changes nothing, so a retried request is safe."""
        return _answer(await run.commit(plain(body), caller))

    @app.post(
        "/api/v4/memory/search",
        responses={**ERRORS, **JSON_ANSWER},
        response_class=Response,
        summary="Retrieve (hybrid search)",
    )
    async def search(request: Request, body: SearchBody, caller: Caller) -> Response:
        """Ranked segments, their files and resources of exactly one scope."""
        return _answer(await run.search(plain(body), caller, request.scope.get(RAW_KEY)))

    @app.post(
        "/api/v4/memory/forget",
        responses={**ERRORS, **JSON_ANSWER},
        response_class=Response,
        summary="Forget one recall file",
    )
    async def forget(body: ForgetBody, caller: Caller) -> Response:
        """Delete one file and everything indexed from it."""
        return _answer(await run.forget(plain(body), caller))

    @app.get("/api/v4/memory/whoami", responses=ERRORS, summary="The calling key's scope")
    async def whoami(caller: Caller) -> dict[str, str | None]:
        """The ``user_id`` (and ``agent_id``, ``null`` for every agent) the key is bound to; a
        request that names no scope acts in this one. ``memu config --cloud`` records it."""
        return v4.whoami(caller)

    if events is not None:
        _add_event_routes(app, events, Caller)

    @app.get("/healthz", include_in_schema=False)
    async def health() -> JSONResponse:
        # A draining server says so, so a load balancer stops sending it new requests.
        if run.draining:
            return JSONResponse({"ok": False, "draining": True}, status_code=503, headers={"Retry-After": "1"})
        return JSONResponse({"ok": True})

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        # Counts and timings only: no key, query, name or scope appears in the output.
        return Response(run.metrics.render(), media_type=CONTENT_TYPE)

    if run.answers is not None:
        app.add_middleware(SearchShortcut, answers=run.answers, requests=run.requests, keys=checker)
    app.add_middleware(BodyLimit)
    plan = faults
    if plan is None and os.environ.get(FAULTS_ENV):
        plan = FaultPlan.from_json(os.environ[FAULTS_ENV])
    if plan is not None:
        app.add_middleware(FaultMiddleware, plan=plan)
    app.add_middleware(MetricsMiddleware, metrics=run.metrics)  # outermost: every answer counts
    return app


def _add_event_routes(app: FastAPI, log: EventLog, caller: Any) -> None:
    """memU's ingest route (one envelope per POST, deduplicated by ``event_id``) and the stats."""

    @app.post(ROUTE, responses=ERRORS, summary="Receive one telemetry event", status_code=202)
    def ingest(envelope: dict[str, Any], scope: caller) -> dict[str, Any]:
        """Store the event once; a re-sent ``event_id`` is acknowledged and not stored again."""
        try:
            checked = check(envelope)
        except InvalidEvent as exc:
            raise v4.ApiError(422, str(exc), "VALIDATION_ERROR") from None
        user = scope.user_id if isinstance(scope, v4.ScopeKey) else None
        stored = log.add(checked, user)
        return {"accepted": True, "duplicate": not stored}

    @app.get(STATS_ROUTE, responses=ERRORS, summary="Events received, per day and name")
    def stats(scope: caller) -> dict[str, Any]:
        """Counts per day and event name, newest day first."""
        return {"days": log.stats()}


def _mount_ui(app: FastAPI, backend: Any, keys: KeyStore) -> None:
    """``memu ui``'s page under ``/ui`` on the TCP face, signing in with an API key (the socket
    face has no browser to serve). A backend that is not the local engine has no page."""
    from memu_core.errors import UsageError
    from memu_server.ui import MOUNT, ui_for

    try:
        page = ui_for(backend, keys)
    except UsageError:
        return
    app.mount(MOUNT, page)
