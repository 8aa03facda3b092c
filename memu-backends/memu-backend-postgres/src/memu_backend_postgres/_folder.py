"""A background thread that folds pending vectors into the HNSW graph after commits (ADR 0029).

A long-lived process (``memu-server``, ``memu serve``) keeps its store open, so the folder links
a commit's vectors into the graph within seconds of the commit, one bounded batch after another,
while searches read the pending rows exactly meanwhile. A short CLI process may exit before the
backlog is folded; its batch in flight is then rolled back by the server (nothing lost), and
the next writer, the next long-lived process or ``memu db upgrade`` carries on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("memu.postgres.fold")

RETRY_SECONDS = 5.0
"""Pause after a failed batch (the server restarting, a pool exhausted) before trying again."""


class Folder:
    """Runs ``fold_once`` (one batch; returns how many vectors moved) until nothing is left,
    each time it is woken; stops between batches when told to."""

    def __init__(self, fold_once: Callable[[], int]) -> None:
        """Wire the batch function; the thread starts on the first :meth:`wake`."""
        self._fold_once = fold_once
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """Ask for a fold of everything pending (starts the thread the first time)."""
        with self._lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                # A daemon: a CLI process must not wait for the backlog at exit (see module doc).
                self._thread = threading.Thread(target=self._run, name="memu-postgres-fold", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            while not self._stop.is_set():
                try:
                    if self._fold_once() == 0:
                        break
                except Exception as exc:  # keep serving; the backlog stays searchable meanwhile
                    log.warning("folding pending vectors failed, retrying in %g s: %s", RETRY_SECONDS, exc)
                    self._stop.wait(RETRY_SECONDS)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch in flight (waits at most ``timeout`` seconds for it)."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout)
