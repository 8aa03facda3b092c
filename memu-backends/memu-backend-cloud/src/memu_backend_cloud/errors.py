"""Typed errors of the cloud client. Each is a :class:`~memu_core.errors.MemuError` (one line on
stderr, non-zero exit) carrying the server's own message and error code."""

from __future__ import annotations

from typing import Any

from memu_core.errors import MemuError, Unsupported, UsageError


class CloudError(MemuError):
    """A v4 API call failed. ``status_code`` is ``None`` for transport failures."""

    def __init__(self, message: str, *, status_code: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code


class CloudAuthenticationError(CloudError):
    """401: the key is missing, unknown or revoked."""


class CloudAuthorizationError(CloudError):
    """403: the key may not touch this scope."""


class CloudValidationError(CloudError, UsageError):
    """400/409/422: the server rejected the request as invalid."""


class CloudRateLimitError(CloudError):
    """429 after every retry."""


class CloudTransportError(CloudError):
    """No answer: connection refused, reset, or timed out (after every retry)."""


class CloudServiceError(CloudError):
    """Any other failure: 404, 5xx after retries, or an answer that is not a JSON object."""


class CloudUnsupportedError(CloudServiceError, Unsupported):
    """404/405/501 from a route memu adds to memU's API (``forget``): the server lacks it."""


NO_ROUTE_STATUS = frozenset({404, 405, 501})
"""How a server says it has no such route (memU's hosted API answers 404 for ``forget``)."""


_BY_STATUS: dict[int, tuple[type[CloudError], str]] = {
    401: (CloudAuthenticationError, "authentication failed"),
    403: (CloudAuthorizationError, "authorization failed"),
    400: (CloudValidationError, "request rejected"),
    409: (CloudValidationError, "request rejected"),
    422: (CloudValidationError, "request rejected"),
    429: (CloudRateLimitError, "rate limit exceeded"),
}


def error_for(status: int, body: Any, reason: str, fix: str = "") -> CloudError:
    """The typed error for an HTTP failure, with the server's ``message`` and first ``details`` code."""
    cls, label = _BY_STATUS.get(status, (CloudServiceError, "service request failed"))
    message = ""
    code = None
    if isinstance(body, dict):
        raw = body.get("message")
        if isinstance(raw, str):
            message = raw.strip()
        for item in body.get("details") or []:
            if isinstance(item, dict) and isinstance(item.get("code"), str):
                code = item["code"]
                break
    text = f"cloud memory {label} ({status}): {message or reason or 'request failed'}"
    if code:
        text += f" [{code}]"
    if fix:
        text += f"; {fix}"
    return cls(text, status_code=status, code=code)
