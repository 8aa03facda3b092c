"""Admission for store work: a few worker threads, a bounded queue, a bounded wait.

The event loop never touches the store: every engine call runs on one of ``threads`` worker
threads. A request that finds ``max_queue`` others already waiting is refused at once, and one
that waits ``max_wait`` seconds without a free worker gives up; both become ``503`` with
``Retry-After`` (:class:`Busy`), so a burst or a stalled store costs clients a bounded wait and
a clear answer instead of an unbounded queue. A started call always runs to its end, even when
its client has gone: a commit that began lands (and a retried one is a no-op: commits are
idempotent by content).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

THREADS = 4
"""Worker threads. SQLite serialises store calls on one connection, and the query embedding
and JSON work around them release the GIL only in part, so more threads mostly queue; a
Postgres store with a larger pool can use more (``--threads``)."""
MAX_QUEUE = 256
"""Requests waiting for a worker before new ones are refused."""
MAX_WAIT = 5.0
"""Seconds a request waits for a worker before it is refused."""


class Busy(Exception):
    """The server cannot take this request now; retry after ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def retry_after_header(self) -> str:
        """``Retry-After`` in whole seconds (at least 1)."""
        return str(max(1, math.ceil(self.retry_after)))


class Gate:
    """Runs blocking store work on bounded worker threads, refusing what would wait too long."""

    def __init__(self, threads: int = THREADS, max_queue: int = MAX_QUEUE, max_wait: float = MAX_WAIT) -> None:
        if threads < 1 or max_queue < 0 or not max_wait > 0:
            raise ValueError("threads >= 1, max_queue >= 0 and max_wait > 0 are required")
        self.threads = threads
        self.max_queue = max_queue
        self.max_wait = max_wait
        self._executor = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="memu-server")
        self._slots: asyncio.Semaphore | None = None
        self.waiting = 0
        self.running = 0
        self.refused = 0

    async def run(self, call: Callable[..., T], *args: Any) -> T:
        """``call(*args)`` on a worker thread once one is free; :class:`Busy` when none frees in time."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.threads)  # bound to the serving loop on first use
        slots = self._slots
        if self.waiting >= self.max_queue and slots.locked():
            self.refused += 1
            raise Busy(f"the server is busy ({self.waiting} requests waiting for a worker); retry shortly")
        self.waiting += 1
        try:
            await asyncio.wait_for(slots.acquire(), self.max_wait)
        except TimeoutError:
            self.refused += 1
            raise Busy(f"no worker was free within {self.max_wait:g} s; retry shortly") from None
        finally:
            self.waiting -= 1
        self.running += 1
        future = self._executor.submit(call, *args)

        def release(_done: concurrent.futures.Future[T]) -> None:
            # The slot is freed when the work ends, not when the awaiting request does: a
            # client that disconnects must not let more work start than there are workers.
            # After shutdown the loop is closed and nothing waits for the slot any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._finished, slots)

        loop = asyncio.get_running_loop()
        future.add_done_callback(release)
        # Shielded: cancelling the request (its client went away) leaves the call running.
        return await asyncio.shield(asyncio.wrap_future(future))

    def _finished(self, slots: asyncio.Semaphore) -> None:
        self.running -= 1
        slots.release()

    def shutdown(self) -> None:
        """Wait for every started call to finish (a commit in flight lands), then stop the workers."""
        self._executor.shutdown(wait=True)
