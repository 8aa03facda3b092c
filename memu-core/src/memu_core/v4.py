"""The v4 memory API's rules, shared by the warm socket server and ``memu-server``.

Routes (memU's hosted API; the collection route has no trailing slash):

- ``GET  /api/v4/memory?user_id=&agent_id=&cursor=&limit=`` → ``{"recall_files", "next_cursor"}``
- ``POST /api/v4/memory`` ``{"user", "recall_files", "resource"}`` → ``{"recall_files", "resources"}``
- ``POST /api/v4/memory/search`` ``{"query", "user_id", "agent_id", "top_k"?}``
  → ``{"segments", "files", "resources"}``
- ``POST /api/v4/memory/forget`` ``{"name", "track"?, "user"?}`` → ``{"forgotten": [...]}`` (memu's addition)
- ``GET  /api/v4/memory/whoami`` → ``{"user_id", "agent_id"}``, the calling key's scope (memu's addition)

Scope rules: only exact ``user_id``/``agent_id``; a missing or blank value is ``"default"``;
any other filter field is refused (422) before the store is touched. A key bound to a scope
acts as that scope where the request leaves a value at ``"default"`` (:func:`scope_for`). Errors are
``{"message": ..., "details": [{"code": ...}]}`` so memU's client reads them.

Every function takes already-decoded JSON and a backend and returns ``(status, body)`` or raises
:class:`ApiError`; the HTTP frameworks only move bytes. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memu_core.errors import (
    EmbeddingError,
    FingerprintMismatch,
    LockBusy,
    MemuError,
    StoreBusy,
    StoreError,
    UsageError,
    WriteConflict,
)
from memu_core.names import check_name, check_track

COLLECTION = "/api/v4/memory"
SEARCH = "/api/v4/memory/search"
FORGET = "/api/v4/memory/forget"
WHOAMI = "/api/v4/memory/whoami"

MAX_BODY_BYTES = 4 * 1024 * 1024
"""Largest request body accepted (a commit of a few hundred Markdown files)."""
MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_TOP_K = 200
MAX_QUERY_CHARS = 8_000
MAX_FILES_PER_COMMIT = 1_000
MAX_SCOPE_CHARS = 200

SCOPE_KEYS = ("user_id", "agent_id")
USER_KEYS = frozenset({"user_id", "agent_id", "user_name", "agent_name"})
LIST_PARAMS = frozenset({"user_id", "agent_id", "cursor", "limit"})
SEARCH_KEYS = frozenset({"query", "user_id", "agent_id", "top_k"})
COMMIT_KEYS = frozenset({"user", "recall_files", "resource"})
FORGET_KEYS = frozenset({"name", "track", "user"})


class ApiError(Exception):
    """An HTTP error with memU's body: ``status``, a one-line ``message`` and a ``code``."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return error_body(self.message, self.code)


def error_body(message: str, code: str) -> dict[str, Any]:
    """``{"message", "details": [{"code"}]}``, the shape memU's client parses."""
    return {"message": message, "details": [{"code": code}]}


def from_memu_error(exc: MemuError) -> ApiError:
    """Map a handled engine error to the status a v4 client expects."""
    if isinstance(exc, WriteConflict):
        return ApiError(409, str(exc), "WRITE_CONFLICT")
    if isinstance(exc, FingerprintMismatch):
        return ApiError(409, str(exc), "FINGERPRINT_MISMATCH")
    if isinstance(exc, UsageError):
        return ApiError(422, str(exc), "VALIDATION_ERROR")
    if isinstance(exc, LockBusy):
        return ApiError(503, str(exc), "BUSY")
    if isinstance(exc, StoreBusy):
        # Nothing was written; the same request may succeed shortly (a server adds Retry-After).
        return ApiError(503, str(exc), "STORE_BUSY")
    if isinstance(exc, EmbeddingError):
        return ApiError(502, str(exc), "EMBEDDING_ERROR")
    if isinstance(exc, StoreError):
        return ApiError(500, str(exc), "STORE_ERROR")
    return ApiError(500, str(exc), "MEMORY_ERROR")


def _invalid(message: str) -> ApiError:
    return ApiError(422, message, "VALIDATION_ERROR")


def scope_value(raw: Any, field: str) -> str:
    """memU's rule: ``None``, missing or blank → ``"default"``, else the trimmed string."""
    if raw is None:
        return "default"
    if not isinstance(raw, str | int) or isinstance(raw, bool):
        raise _invalid(f"{field} must be a string")
    value = str(raw).strip()
    if len(value) > MAX_SCOPE_CHARS:
        raise _invalid(f"{field} is longer than {MAX_SCOPE_CHARS} characters")
    return value or "default"


def _refuse_unknown(given: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    unknown = sorted(set(given) - allowed)
    if unknown:
        raise _invalid(f"{what} only supports {', '.join(sorted(allowed))}; unsupported field(s): {', '.join(unknown)}")


def _object(body: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise _invalid(f"the {what} body must be a JSON object")
    return body


@dataclass(frozen=True, slots=True)
class ScopeKey:
    """What an API key may touch: one user, and one agent or (``None``) all of that user's agents."""

    user_id: str
    agent_id: str | None = None

    def allows(self, user_id: str, agent_id: str) -> bool:
        """Whether a request for exactly ``(user_id, agent_id)`` is inside this key's scope."""
        return user_id == self.user_id and (self.agent_id is None or agent_id == self.agent_id)


def authorize(key: ScopeKey | None, user_id: str, agent_id: str) -> None:
    """Raise 403 when ``key`` (``None`` = a trusted local socket) may not touch the scope."""
    if key is not None and not key.allows(user_id, agent_id):
        raise ApiError(
            403,
            f"this API key is bound to user_id={key.user_id!r}"
            + (f", agent_id={key.agent_id!r}" if key.agent_id is not None else "")
            + f" and may not access user_id={user_id!r}, agent_id={agent_id!r}",
            "FORBIDDEN_SCOPE",
        )


def scope_for(key: ScopeKey | None, user_id: str, agent_id: str) -> tuple[str, str]:
    """The scope a request acts in: a value left at ``"default"`` becomes the key's own, then
    :func:`authorize` checks the result.

    memU's clients send ``"default"`` for a scope nobody named, so that is the only spelling of
    "not named" a server sees. Filling it from the key never widens access (the key could not
    touch ``default`` anyway, unless it is bound to it, when nothing changes); it lets two
    machines share memory through one key bound to ``alice`` without each setting
    ``MEMU_USER_ID``. A request naming another scope is still refused.
    """
    if key is not None:
        if user_id == "default":
            user_id = key.user_id
        if agent_id == "default" and key.agent_id is not None:
            agent_id = key.agent_id
    authorize(key, user_id, agent_id)
    return user_id, agent_id


def whoami(key: ScopeKey | None) -> dict[str, str | None]:
    """``GET /api/v4/memory/whoami``: the calling key's scope; ``agent_id`` ``None`` = every agent.

    A trusted caller (no key) may touch every scope, so both are ``None``.
    """
    if key is None:
        return {"user_id": None, "agent_id": None}
    return {"user_id": key.user_id, "agent_id": key.agent_id}


def _run(call: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = call()
    except MemuError as exc:
        raise from_memu_error(exc) from exc
    return result


def list_files(backend: Any, params: Mapping[str, str], key: ScopeKey | None = None) -> dict[str, Any]:
    """``GET /api/v4/memory``: one page of the scope's recall files."""
    _refuse_unknown(params, LIST_PARAMS, "listing")
    user_id, agent_id = scope_for(
        key, scope_value(params.get("user_id"), "user_id"), scope_value(params.get("agent_id"), "agent_id")
    )
    raw_limit = params.get("limit")
    limit = DEFAULT_PAGE
    if raw_limit not in (None, ""):
        try:
            limit = int(str(raw_limit))
        except ValueError:
            raise _invalid(f"limit must be a whole number between 1 and {MAX_PAGE}, got {raw_limit!r}") from None
        if not 1 <= limit <= MAX_PAGE:
            raise _invalid(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
    cursor = params.get("cursor") or None
    where = {"user_id": user_id, "agent_id": agent_id}
    result = _run(lambda: backend.list_all_recall_files(where, cursor=cursor, limit=limit))
    return {"recall_files": result["recall_files"], "next_cursor": result.get("next_cursor")}


def search(backend: Any, body: Any, key: ScopeKey | None = None) -> dict[str, Any]:
    """``POST /api/v4/memory/search``: segments, files and resources of exactly one scope."""
    data = _object(body, "search")
    _refuse_unknown(data, SEARCH_KEYS, "search (exact user_id and agent_id filters)")
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _invalid("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise _invalid(f"query is longer than {MAX_QUERY_CHARS} characters")
    top_k = data.get("top_k")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K):
        raise _invalid(f"top_k must be a whole number between 1 and {MAX_TOP_K}")
    user_id, agent_id = scope_for(
        key, scope_value(data.get("user_id"), "user_id"), scope_value(data.get("agent_id"), "agent_id")
    )
    where = {"user_id": user_id, "agent_id": agent_id}
    return _run(lambda: backend.progressive_retrieve(query, where, top_k=top_k))


def _user(raw: Any) -> dict[str, Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise _invalid("user must be a JSON object with user_id and/or agent_id")
    _refuse_unknown(raw, USER_KEYS, "user")
    user: dict[str, Any] = {k: scope_value(raw.get(k), k) for k in SCOPE_KEYS}
    for extra in ("user_name", "agent_name"):
        if extra in raw:
            user[extra] = raw[extra]
    return user


def commit(backend: Any, body: Any, key: ScopeKey | None = None) -> dict[str, Any]:
    """``POST /api/v4/memory``: store files and resources in one scope (idempotent by content)."""
    data = _object(body, "commit")
    _refuse_unknown(data, COMMIT_KEYS, "commit")
    user = _user(data.get("user"))
    user["user_id"], user["agent_id"] = scope_for(key, user["user_id"], user["agent_id"])
    files = data.get("recall_files") or []
    resources = data.get("resource") or []
    if not isinstance(files, list) or not isinstance(resources, list):
        raise _invalid("recall_files and resource must be JSON lists")
    if len(files) + len(resources) > MAX_FILES_PER_COMMIT:
        raise _invalid(f"a commit carries at most {MAX_FILES_PER_COMMIT} files and resources; split it")
    _check_names(files)
    scope = {k: user[k] for k in SCOPE_KEYS}
    result = _run(lambda: backend.commit_results(recall_files=files, resource=resources, user=scope))
    out = {"recall_files": result.get("recall_files", []), "resources": result.get("resources", [])}
    if "stats" in result:
        out["stats"] = result["stats"]
    return out


def _check_names(files: list[Any]) -> None:
    """Every file's name and track by the rules of every door, refused as 422 before any write."""
    for index, item in enumerate(files):
        if not isinstance(item, Mapping):
            continue  # the engine names a malformed item itself
        where = f"recall_files[{index}]"
        try:
            check_name(item.get("name"), where)
        except UsageError as exc:
            raise ApiError(422, str(exc), "INVALID_NAME") from None
        try:
            check_track(item.get("track"), where)
        except UsageError as exc:
            raise ApiError(422, str(exc), "INVALID_TRACK") from None


def forget(backend: Any, body: Any, key: ScopeKey | None = None) -> dict[str, Any]:
    """``POST /api/v4/memory/forget``: delete one recall file of one scope."""
    data = _object(body, "forget")
    _refuse_unknown(data, FORGET_KEYS, "forget")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _invalid("name must be the non-empty name of a recall file")
    track = data.get("track") or "memory"
    if not isinstance(track, str):
        raise _invalid("track must be a string")
    user = _user(data.get("user"))
    user["user_id"], user["agent_id"] = scope_for(key, user["user_id"], user["agent_id"])
    scope = {k: user[k] for k in SCOPE_KEYS}
    return _run(lambda: backend.forget(name, track=track, user=scope))
