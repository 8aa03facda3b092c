"""One call run on a thread of its own while the caller does something else.

A hybrid retrieve waits for the query's embedding (a model, or a request to a provider) before it
can search the vectors, but its word search needs no vector: :class:`Beside` runs the word search
meanwhile and hands its result, or its exception, to the caller that asks for it (ADR 0030).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class Beside(Generic[_T]):
    """Start ``call`` on a daemon thread now; :meth:`result` waits for it."""

    def __init__(self, call: Callable[[], _T], name: str = "memu-beside") -> None:
        self._call = call
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._call()
        except BaseException as exc:  # handed to the caller, which raises it as its own
            self._error = exc

    def result(self) -> _T:
        """The call's return value; its exception is raised here, in the caller's thread."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def wait(self) -> None:
        """Wait for the call to end, whatever its outcome (before the caller gives up itself)."""
        self._thread.join()
