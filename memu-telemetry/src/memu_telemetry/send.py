"""Delivering the spool: one POST per envelope, in file order, bounded in requests and time.

Outcomes, as memU's: 2xx accepted; 4xx other than 429 rejected for good (discarded, counted);
429, 5xx, a timeout, a refused connection, a TLS or DNS failure mean "retry later": the flush
stops and the undelivered tail stays on disk. There is no retry inside a flush, so one flush
waits for at most one timeout. A 429's ``Retry-After`` is honoured across processes.
"""

from __future__ import annotations

import contextlib
import enum
import json
import time
from pathlib import Path

from memu_core import events
from memu_telemetry import spool

POST_TIMEOUT = 3.0
"""Seconds one POST may take (connect and answer)."""
MAX_POSTS_PER_FLUSH = 200
"""Requests one flush makes at most; the rest waits for the next flush."""
FLUSH_DEADLINE = 10.0
"""Seconds one flush may spend sending, whatever the server does."""
MAX_RETRY_AFTER = 3600.0


class Outcome(enum.Enum):
    """What became of one POST."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    RETRY = "retry"


def headers() -> dict[str, str]:
    """``Content-Type``, a ``User-Agent`` naming memu (CDNs refuse urllib's default), and the
    bearer key when ``MEMU_CLOUD_API_KEY`` is set (memu-server's scoped keys)."""
    found = {"Content-Type": "application/json", "User-Agent": f"memu-cli/{events.client_version()}"}
    key = events.api_key()
    if key:
        found["Authorization"] = f"Bearer {key}"
    return found


def post(url: str, envelope: dict[str, object], head: dict[str, str]) -> tuple[Outcome, float]:
    """POST one envelope; the outcome and, for a 429, the seconds the server asked to wait."""
    import urllib.error
    import urllib.request

    body = json.dumps(envelope, ensure_ascii=False).encode()
    request = urllib.request.Request(url, data=body, headers=head, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as answer:
            status = answer.status
    except urllib.error.HTTPError as exc:
        if exc.code == 429:
            return Outcome.RETRY, _retry_after(exc.headers.get("Retry-After"))
        if 400 <= exc.code < 500:
            return Outcome.REJECTED, 0.0
        return Outcome.RETRY, 0.0
    except Exception:  # timeout, refused, DNS, TLS: the endpoint is not reachable now
        return Outcome.RETRY, 0.0
    return (Outcome.ACCEPTED if 200 <= status < 300 else Outcome.RETRY), 0.0


def _retry_after(raw: str | None) -> float:
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(raw or 0)))
    except ValueError:
        return 60.0  # an HTTP date or garbage: wait a minute rather than hammer


def _waiting() -> bool:
    try:
        return time.time() < float(spool.retry_after_file().read_text().strip())
    except (OSError, ValueError):
        return False


def _wait_until(seconds: float) -> None:
    if seconds > 0:
        with contextlib.suppress(OSError):
            spool.retry_after_file().write_text(str(time.time() + seconds))


def flush() -> tuple[int, int]:
    """Send what waits; ``(accepted, rejected)``. Never raises; does nothing unless telemetry is
    on and ``MEMU_EVENTS_BASE_URL`` is set, and nothing while another flush runs."""
    try:
        if not events.telemetry_on():
            return (0, 0)
        url = events.endpoint()
        if url is None or _waiting():
            return (0, 0)
        with spool.flush_lock() as mine:
            if not mine:
                return (0, 0)
            return _flush(url)
    except Exception:
        return (0, 0)


def _flush(url: str) -> tuple[int, int]:
    lost = spool.take_dropped()
    if lost:
        # A batch of its own: a spool at its cap would drop the very report of the drops.
        report = events.make_event("cli_events_dropped", {"dropped_count": lost}).envelope()
        if not spool.new_batch([report]):
            spool.count_dropped(lost)
    head = headers()
    deadline = time.monotonic() + FLUSH_DEADLINE
    budget = MAX_POSTS_PER_FLUSH
    accepted = rejected = 0
    # Batches a failed or killed flush left come first; the live spool is taken only once they
    # are settled, so an endpoint that stays down leaves one batch, not one per flush.
    batches = spool.sending_files()
    taken = False
    while True:
        if not batches:
            if taken:
                break
            taken = True
            fresh = spool.rotate()
            if fresh is None:
                break
            batches = [fresh]
        batch = batches.pop(0)
        envelopes, bad = spool.parse(batch)
        spool.count_dropped(bad)  # a line cut short is lost: say so instead of losing it silently
        for index, envelope in enumerate(envelopes):
            if budget <= 0 or time.monotonic() > deadline:
                spool.retain(batch, envelopes[index:])
                return accepted, rejected
            outcome, wait = post(url, envelope, head)
            budget -= 1
            if outcome is Outcome.RETRY:
                spool.retain(batch, envelopes[index:])
                _wait_until(wait)
                return accepted, rejected
            if outcome is Outcome.ACCEPTED:
                accepted += 1
            else:
                rejected += 1
        _settled(batch)
    return accepted, rejected


def _settled(batch: Path) -> None:
    with contextlib.suppress(OSError):
        batch.unlink()
