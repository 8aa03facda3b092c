"""``CloudBackend``: the ``cloud`` AgenticMemoryBackend, a client of a v4 memory API.

It talks to memU's hosted API or to a ``memu-server`` (``MEMU_CLOUD_BASE_URL``), with
``MEMU_CLOUD_API_KEY`` as a bearer key. One ``httpx.Client`` per backend, explicit timeouts,
retries through tenacity (see :mod:`.retry`), and typed errors (:mod:`.errors`). Scope rules are
checked before any request: only exact ``user_id``/``agent_id``; missing = the configured
``MEMU_USER_ID``/``MEMU_AGENT_ID`` (``default``).

Commits are idempotent by content on the server (an unchanged file is not rewritten), which is
what makes retrying a commit whose answer was lost safe: it is applied once, never twice.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

from memu_backend_cloud import retry
from memu_backend_cloud.errors import (
    NO_ROUTE_STATUS,
    CloudError,
    CloudServiceError,
    CloudTransportError,
    CloudUnsupportedError,
    error_for,
)
from memu_core.errors import ConfigError, UsageError
from memu_core.interfaces import AgenticMemoryBackend

DEFAULT_BASE_URL = "https://api.memu.so/api/v4/memory/"
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 30.0
_USER_FIELDS = frozenset({"user_id", "agent_id", "user_name", "agent_name"})
_SCOPE_FIELDS = ("user_id", "agent_id")


def is_loopback(host: str) -> bool:
    """``localhost``, ``*.localhost`` or a loopback IP literal (never a name that merely starts so)."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class _Retry(Exception):
    """Internal: this attempt failed in a way worth retrying."""

    def __init__(self, response: Any = None, error: Exception | None = None) -> None:
        super().__init__(str(error) if error else f"status {getattr(response, 'status_code', '?')}")
        self.response = response
        self.error = error


class CloudBackend(AgenticMemoryBackend):
    """memU's three operations (plus ``forget``) over HTTP."""

    name: ClassVar[str] = "cloud"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        user_id: str = "default",
        agent_id: str = "default",
        max_attempts: int = retry.DEFAULT_ATTEMPTS,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        proxy: str | None = None,
        transport: Any = None,
    ) -> None:
        import httpx

        if not api_key or not api_key.strip():
            raise ConfigError(
                "MEMU_CLOUD_API_KEY is not set; run `memu config --cloud --cloud-api-key KEY` "
                "(a memU Cloud key or one from `memu-server keys create`)"
            )
        if max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"MEMU_CLOUD_BASE_URL={base_url!r} is not an http(s) URL; set it to e.g. "
                "https://memu.example.org/api/v4/memory/"
            )
        self.base_url = base_url.strip().rstrip("/") + "/"
        self.collection_url = self.base_url.rstrip("/")  # the service 404s the slashed form
        self.default_user = {"user_id": user_id or "default", "agent_id": agent_id or "default"}
        self.max_attempts = max_attempts
        mounts = None
        if transport is None and proxy is None and is_loopback(parts.hostname):
            # Ambient proxies must not intercept a server on this machine (memU bug #519).
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            mounts = {f"all://{host}": None}
        self._client = httpx.Client(
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": _user_agent()},
            follow_redirects=True,
            trust_env=transport is None,
            proxy=proxy,
            mounts=mounts,
            transport=transport,
        )

    @classmethod
    def from_settings(cls, settings: Any) -> CloudBackend:
        """``MEMU_CLOUD_API_KEY``, ``MEMU_CLOUD_BASE_URL``, ``MEMU_HTTP_PROXY``, default scope."""
        key = settings.cloud_api_key.get_secret_value() if settings.cloud_api_key is not None else ""
        return cls(
            api_key=key,
            base_url=str(settings.cloud_base_url or DEFAULT_BASE_URL),
            user_id=settings.user_id,
            agent_id=settings.agent_id,
            proxy=settings.http_proxy,
        )

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    # -- scope rules --------------------------------------------------------------------------
    def _scope(self, given: Mapping[str, Any] | None, label: str, allowed: frozenset[str]) -> dict[str, Any]:
        given = given or {}
        if not isinstance(given, Mapping):
            raise UsageError(f"{label} must be a mapping with user_id and/or agent_id")
        unknown = sorted(set(given) - allowed)
        if unknown:
            raise UsageError(
                f"cloud memory only supports exact user_id and agent_id {label} fields; "
                f"unsupported: {', '.join(unknown)}"
            )
        out: dict[str, Any] = {}
        for key in _SCOPE_FIELDS:
            raw = given.get(key)
            if isinstance(raw, list | tuple):
                raise UsageError(f"cloud memory filters on one exact {key}, not a list")
            value = "" if raw is None else str(raw).strip()
            out[key] = value or self.default_user[key]
        for key in ("user_name", "agent_name"):
            if key in given:
                out[key] = given[key]
        return out

    # -- operations ---------------------------------------------------------------------------
    def list_all_recall_files(
        self, where: Mapping[str, Any] | None = None, *, cursor: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """``GET /api/v4/memory``: one page and ``next_cursor``."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise UsageError(f"limit must be a whole number >= 1, got {limit!r}")
        params: dict[str, Any] = self._scope(where, "filter", frozenset(_SCOPE_FIELDS))
        if cursor:
            params["cursor"] = cursor
        params["limit"] = str(limit)
        return self._call("GET", self.collection_url, params=params)

    def progressive_retrieve(
        self,
        query: str,
        where: Mapping[str, Any] | None = None,
        *,
        top_k: int | None = None,
        tracks: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """``POST /api/v4/memory/search``."""
        if not isinstance(query, str) or not query.strip():
            raise UsageError("empty query: pass the question to search memory for")
        if tracks:
            raise UsageError("cloud memory cannot filter by track; drop --track")
        body: dict[str, Any] = {"query": query, **self._scope(where, "filter", frozenset(_SCOPE_FIELDS))}
        if top_k is not None:
            body["top_k"] = top_k
        return self._call("POST", self.base_url + "search", json=body)

    def commit_results(
        self,
        *,
        recall_files: Sequence[Mapping[str, Any]] | None = None,
        resource: Sequence[Mapping[str, Any]] | None = None,
        user: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /api/v4/memory``; safe to retry (idempotent by content)."""
        body = {
            "user": self._scope(user, "user", _USER_FIELDS),
            "recall_files": [dict(f) for f in recall_files or []],
            "resource": [dict(r) for r in resource or []],
        }
        return self._call("POST", self.collection_url, json=body)

    def forget(self, name: str, *, track: str = "memory", user: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``POST /api/v4/memory/forget`` (memu-server; memU's hosted API has no forget route).

        A server without the route (404/405/501) raises :class:`CloudUnsupportedError`, an
        :class:`~memu_core.errors.Unsupported`: a host ``commit`` then keeps going with one
        warning instead of failing on every run. Any other failure keeps its own error.
        """
        if not isinstance(name, str) or not name.strip():
            raise UsageError("forget needs the name of a recall file")
        scope = self._scope(user, "user", _USER_FIELDS)
        body = {"name": name.strip(), "track": track or "memory", "user": scope}
        try:
            return self._call("POST", self.base_url + "forget", json=body)
        except CloudError as exc:
            if exc.status_code not in NO_ROUTE_STATUS:
                raise
            raise CloudUnsupportedError(
                f"cloud memory at {self.base_url} cannot forget a recall file (no forget route, "
                f"{exc.status_code}; memU's hosted API has none): delete it in memU's console, "
                "or serve memory with memu-server",
                status_code=exc.status_code,
                code=exc.code,
            ) from exc

    # -- transport ----------------------------------------------------------------------------
    def _call(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        import httpx
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

        def wait(state: Any) -> float:
            failure = state.outcome.exception() if state.outcome else None
            headers = failure.response.headers if isinstance(failure, _Retry) and failure.response is not None else None
            return retry.delay(state.attempt_number, headers)

        def attempt() -> Any:
            try:
                response = self._client.request(method, url, **kwargs)
            except httpx.TransportError as exc:  # includes timeouts
                raise _Retry(error=exc) from exc
            if response.status_code in retry.RETRYABLE_STATUS:
                raise _Retry(response=response)
            return response

        try:
            response = Retrying(
                stop=stop_after_attempt(self.max_attempts),
                wait=wait,
                retry=retry_if_exception_type(_Retry),
                reraise=True,
            )(attempt)
        except _Retry as final:
            if final.response is None:
                raise CloudTransportError(
                    f"cloud memory at {self.base_url} is unreachable after {self.max_attempts} attempt(s): "
                    f"{final.error}; check MEMU_CLOUD_BASE_URL and the network"
                ) from final.error
            response = final.response
        return self._decode(response)

    def _decode(self, response: Any) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            fix = ""
            if response.status_code == 401:
                fix = "check MEMU_CLOUD_API_KEY (a revoked key stays rejected)"
            elif response.status_code == 403:
                fix = "use a key created for this user_id/agent_id"
            raise error_for(response.status_code, body, response.reason_phrase, fix)
        if body is None:
            raise CloudServiceError(
                f"cloud memory returned invalid JSON ({response.status_code}) from {response.request.url}",
                status_code=response.status_code,
            )
        if not isinstance(body, dict):
            raise CloudServiceError(
                f"cloud memory returned an unexpected response shape ({response.status_code})",
                status_code=response.status_code,
            )
        return body


def _user_agent() -> str:
    import memu_core

    return f"memu-cli/{memu_core.__version__}"
