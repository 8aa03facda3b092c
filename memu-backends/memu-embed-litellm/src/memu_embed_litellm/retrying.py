"""When an embedding request is retried, and how long memu waits before the next try.

Retried: HTTP 408, 429 and 5xx, and transport failures (connect errors, resets, timeouts).
Everything else (401, 403, 400, a malformed answer) fails at once. A ``Retry-After`` header,
in seconds or as an HTTP date, is honoured up to a cap; otherwise the wait doubles from
0.25 s up to 4 s.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from typing import Any

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
BACKOFF_START = 0.25
BACKOFF_MAX = 4.0


_TRANSPORT_NAMES = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "ConnectError",
        "ConnectTimeout",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "ProxyError",
        "TimeoutException",
        "TransportError",
    }
)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first (cycle-safe)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_transport_error(exc: BaseException) -> bool:
    """Connect errors, resets and timeouts, whichever library raised or wrapped them.

    litellm reports a refused connection as an ``InternalServerError`` with status 500; the
    cause chain tells the truth. Classes are matched by name so this module imports neither
    litellm nor openai.
    """
    for link in _chain(exc):
        if isinstance(link, TimeoutError | ConnectionError) or type(link).__name__ in _TRANSPORT_NAMES:
            return True
    return False


def status_of(exc: BaseException) -> int | None:
    """The HTTP status a server answered with, or ``None`` when no answer came back."""
    if is_transport_error(exc):
        return None
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    if isinstance(code, int) and code >= 100:
        return code
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) and code >= 100 else None


def headers_of(exc: BaseException) -> dict[str, str]:
    """Response headers carried by the exception (lower-cased keys), or ``{}``."""
    for source in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
    ):
        if source:
            try:
                return {str(k).lower(): str(v) for k, v in dict(source).items()}
            except (TypeError, ValueError):
                continue
    return {}


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed request is worth another attempt."""
    if is_transport_error(exc):
        return True
    status = status_of(exc)
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


def retry_after_seconds(headers: dict[str, str], now: float | None = None) -> float | None:
    """Seconds asked for by ``Retry-After`` (a number or an HTTP date), ``None`` if absent or bad."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    # Measure against the server's own Date header when it sent one: clocks disagree.
    reference = now if now is not None else time.time()
    date = headers.get("date")
    if date:
        with contextlib.suppress(TypeError, ValueError):
            reference = email.utils.parsedate_to_datetime(date).timestamp()
    return max(0.0, when.timestamp() - reference)


def wait_seconds(attempt: int, exc: BaseException | None, cap: float) -> float:
    """How long to wait after failed ``attempt`` (1-based): ``Retry-After`` capped, else backoff."""
    if exc is not None:
        asked = retry_after_seconds(headers_of(exc))
        if asked is not None:
            return min(asked, cap)
    backoff: float = BACKOFF_START * 2.0 ** (attempt - 1)
    return min(backoff, BACKOFF_MAX, cap if cap > 0 else BACKOFF_MAX)


def describe(exc: BaseException) -> str:
    """A one-line, bounded rendering of a provider's error message."""
    text: Any = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    line = " ".join(str(text).split())
    return line if len(line) <= 200 else line[:197] + "..."
