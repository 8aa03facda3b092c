"""The telemetry switches, as the environment and config.env set them (stdlib and the resolver only).

:mod:`memu_core.events` publishes them to sinks; ``config --telemetry`` and ``config show`` (one
layer down) read them here, so there is one reading of each switch.
"""

from __future__ import annotations

import os

from memu_core._config import resolve

TELEMETRY_ENV = "MEMU_TELEMETRY"
ENDPOINT_ENV = "MEMU_EVENTS_BASE_URL"
DO_NOT_TRACK_ENV = "DO_NOT_TRACK"

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def switch() -> str:
    """``MEMU_TELEMETRY`` trimmed and lower-cased; a declared empty value counts (it means off)."""
    return resolve.lookup_declared(TELEMETRY_ENV, "").strip().lower()


def opted_out() -> bool:
    """``MEMU_TELEMETRY`` is ``0/false/no/off`` or ``DO_NOT_TRACK`` (environment only) is ``1/true/yes/on``."""
    if os.environ.get(DO_NOT_TRACK_ENV, "").strip().lower() in TRUE:
        return True
    return switch() in FALSE


def telemetry_on() -> bool:
    """``MEMU_TELEMETRY`` is ``1/true/yes/on`` and the user did not opt out; off by default."""
    return not opted_out() and switch() in TRUE


def endpoint() -> str | None:
    """``MEMU_EVENTS_BASE_URL``, or ``None`` when unset or empty (nothing is sent)."""
    url = (resolve.lookup(ENDPOINT_ENV, "") or "").strip()
    return url or None
