"""Structured logs: key=value events on stderr, quiet by default, debug with ``-v``/``MEMU_DEBUG=1``.

Code that wants to say what it did takes a logger at import time and logs events with fields::

    log = get_logger("memu.engine")
    log.debug("store opened", store="sqlite", files=12)

Below the active level a call returns at once and structlog is not even imported: the per-turn
``retrieve`` is a fresh process, and importing structlog there would cost more than the search.
The CLI shell calls :func:`configure` once per process; library users who configured structlog
themselves keep their configuration.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DEBUG = 10
INFO = 20
WARNING = 30
ERROR = 40

_TRUE = frozenset({"1", "true", "yes", "on"})


class _State:
    """Process-wide switches, set by :func:`configure`."""

    level = WARNING
    configured = False


def debug_from_env() -> bool:
    """Whether ``MEMU_DEBUG`` asks for debug output (process environment only, like the setting)."""
    return os.environ.get("MEMU_DEBUG", "").strip().lower() in _TRUE


def configure(*, verbose: bool) -> None:
    """Debug events and third-party debug logging on stderr when ``verbose``, else warnings only."""
    _State.level = DEBUG if verbose else WARNING
    if verbose:
        import logging

        # Libraries that log through the standard library (alembic, httpx, uvicorn) join in, at
        # INFO: their DEBUG output would bury memu's own events.
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            format="timestamp=%(asctime)s level=%(levelname)s logger=%(name)s event=%(message)r",
            datefmt="%H:%M:%S",
        )
        _structlog()


def enabled(level: int = DEBUG) -> bool:
    """Whether an event at ``level`` would be written (to skip computing costly fields)."""
    return level >= _State.level


def _structlog() -> Any:
    """structlog, configured for stderr unless the application did it (levels are filtered here)."""
    import structlog

    if not _State.configured:
        _State.configured = True
        if not structlog.is_configured():
            structlog.configure(
                processors=[
                    structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="%H:%M:%S"),
                    structlog.processors.LogfmtRenderer(key_order=["timestamp", "level", "logger", "event"]),
                ],
                wrapper_class=structlog.make_filtering_bound_logger(DEBUG),
                # stderr looked up per write: the shell may swap or re-encode it after this runs.
                logger_factory=_StderrLoggerFactory(),
                cache_logger_on_first_use=False,
            )
    return structlog


class _StderrLogger:
    """The smallest structlog logger: one line per event on the current ``sys.stderr``."""

    def msg(self, message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


class _StderrLoggerFactory:
    def __call__(self, *args: Any) -> _StderrLogger:
        return _StderrLogger()


class Logger:
    """A named event logger whose calls cost nothing below the active level."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def _emit(self, level: int, method: str, event: str, fields: dict[str, Any]) -> None:
        if level < _State.level:
            return
        try:
            getattr(_structlog().get_logger().bind(logger=self.name), method)(event, **fields)
        except Exception:  # a log line is a side channel: it never fails the command
            return

    def enabled(self, level: int = DEBUG) -> bool:
        """Whether an event at ``level`` would be written (to skip computing costly fields)."""
        return level >= _State.level

    def debug(self, event: str, **fields: Any) -> None:
        """A step of the work, for ``-v``: what was opened, chosen, scanned or written."""
        self._emit(DEBUG, "debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        """A notable outcome (shown with ``-v``)."""
        self._emit(INFO, "info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        """Something the user may want to fix; always shown."""
        self._emit(WARNING, "warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        """A failure that did not stop the command; always shown."""
        self._emit(ERROR, "error", event, fields)


def get_logger(name: str) -> Logger:
    """The logger for ``name`` (``memu.<room>``); cheap to create at import time."""
    return Logger(name)
