"""Where output goes: results on stdout (JSON when a program reads it), logs on stderr."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def print_json(value: Any) -> None:
    """Print ``value`` as indented UTF-8 JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def configure_logging(verbose: bool) -> None:
    """Quiet by default (warnings), debug with ``-v``; structlog renders to stderr.

    structlog is configured lazily by :func:`logger` so commands that never log never import it.
    """
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, stream=sys.stderr, format="%(message)s")


def logger(name: str = "memu") -> Any:
    """A structlog logger writing key=value lines to stderr through stdlib logging."""
    import structlog

    if not structlog.is_configured():
        structlog.configure(
            processors=[
                structlog.stdlib.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                structlog.dev.ConsoleRenderer(colors=False),
            ],
            logger_factory=structlog.stdlib.LoggerFactory(),
            wrapper_class=structlog.stdlib.BoundLogger,
            cache_logger_on_first_use=True,
        )
    return structlog.get_logger(name)
