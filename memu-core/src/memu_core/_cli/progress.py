"""Progress of long work on stderr: a bar with a total and an ETA on a terminal, lines when piped.

``reindex``, ``import``, ``export``, ``commit --from-dir`` and a backlog ``prepare`` report
through :class:`Progress`. On a terminal it draws a rich progress bar (rich comes with typer);
when stderr is a pipe or a file (a scheduler's log) it writes one ``key=value`` line every
``every`` items, and a heartbeat line when nothing was written for :data:`HEARTBEAT` seconds,
so a log never goes silent for a minute while work is under way (a model loading, one slow
embedding request). Nothing here is imported on the per-turn ``retrieve`` path, and rich only
when a bar is drawn.
"""

from __future__ import annotations

import _thread
import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, ClassVar

from memu_core.interfaces import Embedder

if TYPE_CHECKING:  # an annotation only: the commands that show progress need not build the store types
    from memu_core.types import Fingerprint

HEARTBEAT = 20.0
"""Seconds of silence after which a piped run writes a line saying it is still working."""
LINES_PER_RUN = 20
"""A piped run writes about this many count lines when it knows its total."""
QUIET = 1.0
"""Seconds of work that show nothing: only slower work draws a bar or writes count lines."""
EMBED_CHUNK = 256
"""Texts per embedding call while a commit is watched: a tick after each one."""


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _seconds(value: float) -> str:
    return f"{value:.1f}"


class Progress:
    """One task's progress: ``with Progress("export", total, unit="files") as p: p.advance()``.

    ``total`` may be unknown at first (``None``) and given later through :meth:`update`. Work
    that ends within ``quiet`` seconds shows nothing (a small commit stays as terse as before);
    longer work gets, on a terminal, a bar with done/total, the elapsed time and the time left,
    and piped, lines such as
    ``memu progress task=export done=40 total=200 unit=files percent=20 elapsed_s=1.2 eta_s=4.8``.
    :meth:`note` lines (a phase such as loading a model) are always written.
    """

    def __init__(
        self,
        task: str,
        total: int | None = None,
        *,
        unit: str = "items",
        stream: IO[str] | None = None,
        every: int | None = None,
        heartbeat: float = HEARTBEAT,
        quiet: float = QUIET,
        terminal: bool | None = None,
    ) -> None:
        self.task = task
        self.total = total
        self.unit = unit
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _is_terminal(self.stream) if terminal is None else terminal
        self._every = every
        self._heartbeat = heartbeat
        self._quiet = quiet
        self._started = time.monotonic()
        self._last_line = self._started
        self._last_count = 0
        self._spoke = False
        # ``_thread``, not ``threading``: a ticker needs a lock and a timed wait, and ``threading``
        # costs every prepare about 1 ms to import (ADR 0026's sixth pass).
        self._lock = _thread.RLock()
        self._stop = _thread.allocate_lock()
        self._stop.acquire()  # held until close(): the ticker's timed wait on it is its clock
        self._ticker: Any = None
        """A lock the ticker holds while it runs; acquiring it joins the ticker."""
        self._bar: Any = None
        self._bar_task: Any = None
        self._closed = False

    # -- life cycle ----------------------------------------------------------------------------
    def __enter__(self) -> Progress:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close(finished=kind is None)

    def start(self) -> None:
        """Start the clock, and the thread that draws the bar (or the heartbeat) once work is slow."""
        self._started = self._last_line = time.monotonic()
        if self._quiet <= 0 and self.terminal:
            self._draw()
        running = _thread.allocate_lock()
        running.acquire()
        self._ticker = running
        _thread.start_new_thread(self._run_ticker, (running,))

    def close(self, *, finished: bool = True) -> None:
        """Stop drawing; a piped run that wrote lines writes its last count (when ``finished``)."""
        if self._closed:
            return
        self._closed = True
        self._stop.release()
        if self._ticker is not None:
            self._ticker.acquire(timeout=2.0)
        with self._lock:
            if self._bar is not None:
                self._bar.update(self._bar_task, completed=self.done, total=self.total)
                self._bar.stop()
            elif finished and self._spoke and self.done != self._last_count:
                self._line()

    # -- reporting -----------------------------------------------------------------------------
    def advance(self, count: int = 1) -> None:
        """``count`` more items are done."""
        with self._lock:
            self.update(self.done + count)

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` items are done so far (of ``total``, when it is now known)."""
        with self._lock:
            self.done = done
            if total is not None:
                self.total = total
            if self._bar is not None:
                self._bar.update(self._bar_task, completed=done, total=self.total)
            elif not self.terminal and self._slow() and done - self._last_count >= self._step():
                self._line()

    def note(self, text: str) -> None:
        """A phase of the work (``loading the embedding model``) as a line of its own."""
        with self._lock:
            if self._bar is not None:
                self._bar.console.print(f"memu: {text}", markup=False, highlight=False)
            else:
                self._write(f"memu: {text}")

    # -- drawing -------------------------------------------------------------------------------
    def _slow(self) -> bool:
        return time.monotonic() - self._started >= self._quiet

    def _draw(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        console = Console(file=self.stream, stderr=self.stream is sys.stderr)
        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(self.unit),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._bar.start()
        self._bar_task = self._bar.add_task(self.task, total=self.total, completed=self.done)

    def _run_ticker(self, running: Any) -> None:
        try:
            self._tick()
        finally:
            running.release()

    def _tick(self) -> None:
        while not self._stop.acquire(timeout=0.2):
            with self._lock:
                if self._closed or not self._slow():
                    continue
                if self.terminal:
                    if self._bar is None:
                        self._draw()
                elif self._heartbeat > 0 and time.monotonic() - self._last_line >= self._heartbeat:
                    self._line(waiting=True)

    # -- the piped form ------------------------------------------------------------------------
    def _step(self) -> int:
        if self._every is not None:
            return max(1, self._every)
        if self.total:
            return max(1, -(-self.total // LINES_PER_RUN))
        return 100

    def _line(self, *, waiting: bool = False) -> None:
        elapsed = time.monotonic() - self._started
        fields = [f"task={self.task}", f"done={self.done}"]
        if self.total is not None:
            fields.append(f"total={self.total}")
        fields.append(f"unit={self.unit}")
        if self.total:
            fields.append(f"percent={min(100, 100 * self.done // self.total)}")
        fields.append(f"elapsed_s={_seconds(elapsed)}")
        if self.total and self.done:
            left = elapsed / self.done * max(0, self.total - self.done)
            fields.append(f"eta_s={_seconds(left)}")
        if waiting:
            fields.append("state=working")
        self._last_count = self.done
        self._spoke = True
        self._write("memu progress " + " ".join(fields))

    def _write(self, line: str) -> None:
        self._last_line = time.monotonic()
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed pipe must not fail the work it reports on


class WatchedEmbedder(Embedder):
    """An embedder that embeds in chunks and reports each one to a :class:`Progress`.

    The engine hands a commit's new texts to the embedder in one call; split here, a commit of
    thousands of files moves the bar as it goes and the total is known from the first call.
    """

    name: ClassVar[str] = "watched"

    def __init__(self, inner: Embedder, progress: Progress, *, chunk: int = EMBED_CHUNK) -> None:
        self.inner = inner
        self.progress = progress
        self.chunk = chunk

    @classmethod
    def from_settings(cls, settings: Any) -> WatchedEmbedder:  # pragma: no cover - built by watch_embedding
        raise NotImplementedError("WatchedEmbedder wraps the configured embedder; see watch_embedding")

    @property
    def fingerprint(self) -> Fingerprint:
        return self.inner.fingerprint

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return self.inner.embed(texts)
        progress = self.progress
        progress.update(progress.done, (progress.total or 0) + len(texts))
        out: list[list[float]] = []
        for start in range(0, len(texts), self.chunk):
            part = texts[start : start + self.chunk]
            out.extend(self.inner.embed(part))
            progress.advance(len(part))
        return out


@contextlib.contextmanager
def watch_embedding(progress: Progress) -> Iterator[None]:
    """While inside, the embedder this process builds reports to ``progress`` and says when it
    loads (the model load is otherwise the silent part of a first commit).

    It wraps whatever front is already in place (the warm-server route), so texts still go to
    the warm server when one answers; the previous front is put back on the way out.
    """
    from memu_core import _compose

    previous = _compose.set_embedder_front(None)

    def front(build: Callable[[], Embedder]) -> Embedder:
        def loud_build() -> Embedder:
            # A local model loads on its first texts: say so before the wait, not after it.
            progress.note("loading the embedding model in this process (a local model takes a while the first time)")
            return build()

        # Behind the warm-server route the route itself says when it falls back to loading the
        # model here (and how many texts wait for it); a second line would repeat it.
        inner = previous(build) if previous is not None else loud_build()
        return WatchedEmbedder(inner, progress)

    _compose.set_embedder_front(front)
    try:
        yield
    finally:
        _compose.set_embedder_front(previous)
