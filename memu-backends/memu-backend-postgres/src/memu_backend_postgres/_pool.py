"""Connection-pool options carried in the store URL (stdlib only).

``MemoryStore.open`` receives one string, ``MEMU_DB``, so the pool is configured there, as
query parameters the store removes before the URL reaches libpq (which would reject them)::

    postgresql://memu:secret@db:5432/memu?pool_size=16&pool_timeout=2&max_overflow=0

A long-lived process (``memu-server``) sizes the pool to its worker count; a CLI command uses
one connection at a time and keeps the defaults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memu_core.errors import ConfigError

POOL_SIZE = 5
"""Connections kept open (SQLAlchemy's default)."""

MAX_OVERFLOW = 5
"""Extra connections opened under a burst and closed when returned."""

POOL_TIMEOUT = 10.0
"""Seconds a caller waits for a free connection before :class:`~memu_core.errors.StoreBusy`."""


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """How many connections the store keeps and how long a caller waits for one."""

    size: int = POOL_SIZE
    max_overflow: int = MAX_OVERFLOW
    timeout: float = POOL_TIMEOUT

    @property
    def most(self) -> int:
        """Connections open at the most (``size + max_overflow``)."""
        return self.size + self.max_overflow


_PARAMS = {"pool_size": "size", "max_overflow": "max_overflow", "pool_timeout": "timeout"}


def _number(key: str, raw: str, where: str = "MEMU_DB parameter") -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    low = 0.001 if key == "pool_timeout" else (1 if key == "pool_size" else 0)
    if not math.isfinite(value) or value < low or (key != "pool_timeout" and value != int(value)):
        kind = "a number of seconds above 0" if key == "pool_timeout" else f"a whole number >= {low}"
        raise ConfigError(f"{where} {key}={raw!r} is invalid; use {kind}, e.g. {key}=5")
    return value


def split_pool_options(url: str) -> tuple[str, PoolOptions]:
    """``url`` without the pool parameters, and the options they set (defaults for the rest)."""
    parts = urlsplit(url)
    if not parts.query:
        return url, PoolOptions()
    kept: list[tuple[str, str]] = []
    found: dict[str, float] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in _PARAMS:
            found[_PARAMS[key]] = _number(key, value)
        else:
            kept.append((key, value))
    if not found:
        return url, PoolOptions()
    options = PoolOptions(
        size=int(found.get("size", POOL_SIZE)),
        max_overflow=int(found.get("max_overflow", MAX_OVERFLOW)),
        timeout=float(found.get("timeout", POOL_TIMEOUT)),
    )
    return urlunsplit(parts._replace(query=urlencode(kept))), options


def merge(options: PoolOptions, size: int | None, max_overflow: int | None, timeout: float | None) -> PoolOptions:
    """``options`` with every explicitly given value put in its place (arguments win over the URL)."""
    given = {
        key: value
        for key, value in (("pool_size", size), ("max_overflow", max_overflow), ("pool_timeout", timeout))
        if value is not None
    }
    for key, value in given.items():
        _number(key, str(value), "PostgresStore.open argument")  # the URL's validation
    return replace(
        options,
        size=int(given.get("pool_size", options.size)),
        max_overflow=int(given.get("max_overflow", options.max_overflow)),
        timeout=float(given.get("pool_timeout", options.timeout)),
    )
