"""The retry policy: which failures are worth another attempt, and how long to wait.

Retried: transport errors and timeouts, and 408/429/500/502/503/504. The wait honours the
server's ``Retry-After`` (seconds, or an HTTP date measured against the response's own ``Date``,
never the local clock), capped at :data:`MAX_RETRY_AFTER`; otherwise exponential backoff
0.25 s, 0.5 s, 1 s, 2 s, 2 s… Attempts count the first try.
"""

from __future__ import annotations

import email.utils
from typing import Any

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_ATTEMPTS = 3
MAX_RETRY_AFTER = 30.0
BACKOFF_BASE = 0.25
BACKOFF_CAP = 2.0


def backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based) without a hint."""
    return float(min(BACKOFF_BASE * 2 ** (attempt - 1), BACKOFF_CAP))


def retry_after(headers: Any) -> float | None:
    """The server's ``Retry-After`` in seconds, clamped to [0, cap]; ``None`` when absent or unreadable."""
    raw = headers.get("retry-after") if headers is not None else None
    if not raw:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
            now = email.utils.parsedate_to_datetime(headers.get("date") or "")
            seconds = (when - now).total_seconds()
        except (TypeError, ValueError, OverflowError):
            return None
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def delay(attempt: int, headers: Any = None) -> float:
    """Wait before the next attempt: the server's hint when it gave one, else backoff."""
    hinted = retry_after(headers)
    return backoff(attempt) if hinted is None else hinted
